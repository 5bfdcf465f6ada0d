// Typing of YAML scalars the way llama-swap's Go YAML library (yaml.v3) types them, so that a
// config means the same thing to swapd: `8080` is an int, `1.0` a float, `true` a bool, while
// `on`, `yes` and quoted or block scalars stay strings. Also Go's `%v` formatting of such values,
// which is how llama-swap turns a macro value into text (`1.0` becomes "1").
// Pure functions; thread safe.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "config/yaml_document.h"

namespace swapd {

// null, bool, integer, float or string, as yaml.v3 resolves the scalar (or null node).
nlohmann::json ScalarToJson(const YamlNode& node);

// A whole subtree: maps become objects (keys as text), lists arrays, scalars as above.
nlohmann::json NodeToJson(const YamlNode& node);

// true/false for YAML 1.2 booleans (true, True, TRUE, false, ...).
std::optional<bool> Yaml12Bool(std::string_view text);
// true/false for the YAML 1.1 spellings yaml.v3 still accepts in a typed bool field
// (y, yes, on, n, no, off, in their usual capitalizations).
std::optional<bool> Yaml11Bool(std::string_view text);

// Go's fmt "%v" of a JSON scalar: 1.0 -> "1", 1e6 -> "1e+06", 0.5 -> "0.5", true -> "true";
// strings unchanged.
std::string GoFormat(const nlohmann::json& value);

}  // namespace swapd
