// User macros (`macros:` at the top level and per model) and their expansion, exactly in
// llama-swap's order so that configs expand to the same text: the model's list is MODEL_ID, then
// the global macros, with a model macro of the same name replacing the global one in place (others
// appended), and the list is substituted last-declared first. That is why a macro may use only
// macros declared before it. `${env.NAME}` is expanded earlier (env_macros.h); ${PORT} later.
// Pure functions; thread safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "config/diagnostics.h"
#include "config/yaml_document.h"

namespace swapd {

struct Macro {
  std::string name;
  nlohmann::json value;  // string, integer, float or bool
  Position pos;          // of the value
  YamlNodePtr node;      // the value node; null for MODEL_ID
};

// Reads a `macros:` map, reporting bad names (llama-swap's ^[a-zA-Z0-9_-]+$, under 64 chars, not
// reserved: PORT, MODEL_ID, PID, SLOT_DIR, env), values that are not scalars, and self-references.
// `context` prefixes messages (e.g. `model "x": `). Invalid macros are left out.
std::vector<Macro> ReadMacros(const YamlNode& map, const std::string& context,
                              DiagnosticSink& sink);

// MODEL_ID, then `global`, with each of `local` replacing the global of the same name in place.
std::vector<Macro> MergeMacros(const std::string& model_id, const std::vector<Macro>& global,
                               const std::vector<Macro>& local);

// Substitutes `${name}` for each macro, last declared first; values are formatted as Go's %v.
std::string ExpandMacros(std::string text, const std::vector<Macro>& macros);
// The same through a JSON value (strings inside maps and lists, not keys). A string that is
// exactly "${name}" takes the macro's value with its type (int stays int).
nlohmann::json ExpandMacros(nlohmann::json value, const std::vector<Macro>& macros);
// One macro (e.g. PORT) in a JSON value, type preserving as above.
nlohmann::json ExpandMacro(nlohmann::json value, const std::string& name,
                           const nlohmann::json& macro_value);

// `${name}` occurrences left in `text` whose name is a possible macro name ([a-zA-Z0-9_-]+).
std::vector<std::string> FindMacroRefs(std::string_view text);
// Every such reference in the strings of a JSON value.
std::vector<std::string> FindMacroRefsInJson(const nlohmann::json& value);

void ReplaceAll(std::string& text, std::string_view from, std::string_view to);

}  // namespace swapd
