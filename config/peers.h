// Reads and checks `peers` once the models and aliases are known: each peer's proxy URL, apiKey
// (macros expanded), models, filters and timeouts; then the names requests may use: every
// "<peer>/<model>" (an error when it is a local id or alias, or when two peers' names collide),
// and a bare model name when one peer alone lists it and no local id or alias claims it.
// Internal to config/.
#pragma once

#include "config/config.h"
#include "config/diagnostics.h"
#include "config/raw_config.h"

namespace swapd {

void LinkPeers(const RawConfig& raw, Config& config, DiagnosticSink& sink);

}  // namespace swapd
