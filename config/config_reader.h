// The schema walk: reads the (merged, env-expanded) YAML tree of a whole config into a
// RawConfig, checking types, value ranges and keys, with llama-swap's defaults. Macros are read
// but not expanded yet; see model_builder.h. Internal to config/. Not synchronized.
#pragma once

#include "config/diagnostics.h"
#include "config/raw_config.h"
#include "config/yaml_document.h"

namespace swapd {

// `strict`: unknown keys are errors rather than warnings.
RawConfig ReadConfigTree(const YamlNode& root, bool strict, DiagnosticSink& sink);

}  // namespace swapd
