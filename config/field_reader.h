// Typed reading of config fields out of YAML maps, with the checks and messages every level of
// the schema shares: type errors name the field and what was found there, keys swapd does not
// implement yet are reported once per kind of key, unknown keys get a "did you mean" and become
// errors under --strict. Used by config_reader.cpp. Not synchronized: one per load.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/diagnostics.h"
#include "config/raw_config.h"
#include "config/schema_keys.h"
#include "config/yaml_document.h"

namespace swapd {

class FieldReader {
 public:
  FieldReader(bool strict, DiagnosticSink& sink) : strict_(strict), sink_(sink) {}

  // Reports each key of `map` that `keys` does not support. `context` prefixes messages
  // (`model "x": `); `path` names the level for grouping ("models.*.").
  void CheckKeys(const YamlNode& map, const KeySet& keys, const std::string& context,
                 const std::string& path);
  // One warning per unsupported key path, at its first place, counting the others.
  void ReportUnsupported();

  // Scalars of any type as their text; a null value is absent (nullopt).
  std::optional<RawText> Text(const YamlEntry& e, const std::string& context);
  std::optional<int64_t> Int(const YamlEntry& e, const std::string& context);
  // true/false; the YAML 1.1 spellings (yes, on, ...) are accepted with a hint, as yaml.v3 does.
  std::optional<bool> Bool(const YamlEntry& e, const std::string& context);
  // A list of scalars; null is an empty list.
  std::vector<RawText> TextList(const YamlEntry& e, const std::string& context);
  // A map, or null (nullopt without error); anything else is an error.
  bool IsMapOrError(const YamlEntry& e, const std::string& context);

  DiagnosticSink& sink() { return sink_; }

 private:
  void TypeError(const YamlEntry& e, const std::string& context, const std::string& expected);

  struct Unsupported {
    std::string key;  // as shown: with the context of its first place
    Position first;
    int count = 0;
  };
  bool strict_;
  DiagnosticSink& sink_;
  std::map<std::string, Unsupported> unsupported_;  // by path + key
};

// `"text"` for a scalar, "a list" / "a map" / "nothing" otherwise.
std::string Describe(const YamlNode& node);

}  // namespace swapd
