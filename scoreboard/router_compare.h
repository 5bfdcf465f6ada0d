// `swapd bench --compare-router PATH`: the same swaps through llama.cpp's own router mode, the
// nearest peer of swapd, in the same run: llama-server (PATH) started with no model, a preset file
// of the swapped models (each model's file and the flags of its swapd `cmd`) and --models-max 1,
// so that a request for one model unloads the other. The router's instances inherit the bench's
// environment, not a model's `env`. Pure but for StartRouter.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "config/config.h"
#include "scoreboard/bench_options.h"
#include "scoreboard/own_server.h"

namespace swapd {

// llama-server's --models-preset INI for `models` (id, the argv of its swapd `cmd`): a section per
// id whose `model` is the value of -m/--model, and one key per other flag of the command line
// ("--ctx-size 8192" -> "ctx-size = 8192", a flag without a value -> "= true"). The flags the
// router sets itself (--port, --host, --alias) are left out. An argv without -m/--model is an
// error.
Result<std::string> RouterPresetIni(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& models);

// Writes the preset of the --swap models of `o` (defined in `config`, its --config) to
// <output_dir>/router-models.ini and starts `o.compare_router` as a router on a free loopback
// port, its log <output_dir>/llama-router.log; waits up to `timeout` for its /health.
Result<std::unique_ptr<OwnServer>> StartRouter(const BenchOptions& o, const Config& config,
                                               std::chrono::seconds timeout);

}  // namespace swapd
