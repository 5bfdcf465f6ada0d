// Expands one model as written (RawModel) into its final ModelConfig: user macros, ${MODEL_ID},
// ${PORT} allocation, comment stripping and argv splitting of cmd/cmdStop, env parsing, filters,
// and llama-swap's defaults. Leftover `${...}` references are explained (unknown macro, macro
// declared too late, ${PORT} without cmd, ${PID} outside cmdStop) at their position.
// Internal to config/. Not synchronized.
#pragma once

#include "config/config.h"
#include "config/diagnostics.h"
#include "config/raw_config.h"

namespace swapd {

// Builds `raw`. Models must be built in sorted id order: a model whose cmd uses ${PORT} takes
// `next_port` and increments it.
ModelConfig BuildModel(const RawModel& raw, const RawConfig& config, int& next_port,
                       DiagnosticSink& sink);

// filters.stripParams: comma separated; blanks, duplicates and "model" (never stripped) dropped;
// sorted.
std::vector<std::string> SplitStripParams(const std::string& text);

}  // namespace swapd
