// `capabilities` of a model: read from its (macro-expanded) JSON with llama-swap's keys and
// values, each problem reported at its place in the YAML. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "config/config.h"
#include "config/diagnostics.h"
#include "config/yaml_document.h"

namespace swapd {

// `value` is `node` after macro expansion; `context` prefixes messages (`model "x": `).
std::optional<ModelCapabilities> ReadCapabilities(const nlohmann::json& value, const YamlNode& node,
                                                  const std::string& context, DiagnosticSink& sink);

}  // namespace swapd
