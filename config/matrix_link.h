// The second half of reading the matrix router and the FIFO priorities: once the models are
// known, the raw YAML (raw_config.h) becomes Config::matrix and ModelConfig::priority. Vars and
// model ids are resolved, `+name` references inlined; unknown names, cycles, bad costs and an
// empty `sets` are errors at their file:line:col. Internal to config/.
#pragma once

#include "config/diagnostics.h"
#include "config/raw_config.h"

namespace swapd {

void LinkMatrix(const RawConfig& raw, Config& config, DiagnosticSink& sink);
void LinkPriority(const RawConfig& raw, Config& config, DiagnosticSink& sink);

}  // namespace swapd
