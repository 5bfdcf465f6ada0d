// Reads and checks `selectors` once the models, aliases, peers and the router are known:
// strategies, targets (models, aliases or peers' models, which warm does not take; no selector
// chaining), a selector id that is no model id or alias,
// and spillover targets that can run together (one group with swap: false, or one matrix set).
// Internal to config/.
#pragma once

#include "config/config.h"
#include "config/diagnostics.h"
#include "config/raw_config.h"

namespace swapd {

void LinkSelectors(const RawConfig& raw, Config& config, DiagnosticSink& sink);

}  // namespace swapd
