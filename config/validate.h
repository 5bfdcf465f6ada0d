// Cross-checks that need every model built: aliases (unique, never a model id), groups (members
// are models, each model in at most one group, the implicit "(default)" group for the others),
// `hooks.on_startup.preload` (ids or aliases, resolved), `apiKeys`, and hints where llama-swap's
// reading surprises (a group is exclusive unless it says otherwise).
// Internal to config/. Not synchronized.
#pragma once

#include "config/config.h"
#include "config/diagnostics.h"
#include "config/raw_config.h"

namespace swapd {

// Fills config.aliases, config.groups, each model's group, config.preload and config.api_keys.
// `config.models` must already hold the built models. When `complete` is false (a file could
// not be parsed), references to models that may live in that file are not reported.
void LinkAndValidate(const RawConfig& raw, Config& config, bool complete, DiagnosticSink& sink);

}  // namespace swapd
