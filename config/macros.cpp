#include "config/macros.h"

#include <algorithm>

#include "config/yaml_scalar.h"

namespace swapd {
namespace {

bool IsMacroNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

bool IsReserved(std::string_view name) {
  return name == "PORT" || name == "MODEL_ID" || name == "PID" || name == "env" ||
         name == "SLOT_DIR";
}

void CollectRefs(const nlohmann::json& value, std::vector<std::string>& out) {
  if (value.is_string()) {
    for (auto& r : FindMacroRefs(std::string_view(value.get_ref<const std::string&>())))
      out.push_back(std::move(r));
  } else if (value.is_structured()) {
    for (const auto& item : value) CollectRefs(item, out);
  }
}

}  // namespace

void ReplaceAll(std::string& text, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  size_t at = 0;
  while ((at = text.find(from, at)) != std::string::npos) {
    text.replace(at, from.size(), to);
    at += to.size();
  }
}

std::vector<Macro> ReadMacros(const YamlNode& map, const std::string& context,
                              DiagnosticSink& sink) {
  std::vector<Macro> macros;
  if (map.is_null()) return macros;
  if (!map.is_map()) {
    sink.Error(map.pos, context + "macros must be a map of name: value");
    return macros;
  }
  for (const auto& e : map.entries) {
    const std::string& name = e.key->value;
    const std::string label = context + "macro \"" + name + "\"";
    if (!e.key->is_scalar() || name.empty() || name.size() >= 64 ||
        !std::all_of(name.begin(), name.end(), IsMacroNameChar)) {
      sink.Error(e.key->pos, label +
                                 ": invalid name: use 1 to 63 letters, digits, '_' or '-' "
                                 "(^[a-zA-Z0-9_-]+$)");
      continue;
    }
    if (IsReserved(name)) {
      sink.Error(e.key->pos, label +
                                 ": the name is reserved (PORT, MODEL_ID, PID, SLOT_DIR and "
                                 "env are set by swapd)");
      continue;
    }
    if (e.value->is_map() || e.value->is_sequence()) {
      sink.Error(e.value->pos, label + ": the value must be a string, number or boolean, not " +
                                   std::string(KindName(e.value->kind)));
      continue;
    }
    nlohmann::json value = ScalarToJson(*e.value);
    if (value.is_null()) {
      sink.Error(e.value->is_null() ? e.key->pos : e.value->pos, label + ": has no value");
      continue;
    }
    if (value.is_string() &&
        value.get<std::string>().find("${" + name + "}") != std::string::npos) {
      sink.Error(e.value->Locate("${" + name + "}"),
                 label + ": refers to itself (${" + name + "})");
      continue;
    }
    if (e.value->plain && Yaml11Bool(e.value->value)) {
      sink.Hint(e.value->pos, label + ": " + e.value->value + " is the string \"" + e.value->value +
                                  "\" (Go's YAML, like llama-swap, does not read it as a boolean)");
    }
    macros.push_back(Macro{name, std::move(value), e.value->pos, e.value});
  }
  return macros;
}

std::vector<Macro> MergeMacros(const std::string& model_id, const std::vector<Macro>& global,
                               const std::vector<Macro>& local) {
  std::vector<Macro> merged;
  merged.reserve(global.size() + local.size() + 1);
  merged.push_back(Macro{"MODEL_ID", model_id, {}, nullptr});
  merged.insert(merged.end(), global.begin(), global.end());
  for (const auto& m : local) {
    auto it = std::find_if(merged.begin(), merged.end(),
                           [&](const Macro& g) { return g.name == m.name; });
    if (it != merged.end()) {
      *it = m;
    } else {
      merged.push_back(m);
    }
  }
  return merged;
}

std::string ExpandMacros(std::string text, const std::vector<Macro>& macros) {
  for (auto it = macros.rbegin(); it != macros.rend(); ++it) {
    ReplaceAll(text, "${" + it->name + "}", GoFormat(it->value));
  }
  return text;
}

nlohmann::json ExpandMacro(nlohmann::json value, const std::string& name,
                           const nlohmann::json& macro_value) {
  const std::string slug = "${" + name + "}";
  if (value.is_string()) {
    std::string s = value.get<std::string>();
    if (s == slug) return macro_value;
    ReplaceAll(s, slug, GoFormat(macro_value));
    return s;
  }
  if (value.is_structured()) {
    for (auto& item : value) item = ExpandMacro(std::move(item), name, macro_value);
  }
  return value;
}

nlohmann::json ExpandMacros(nlohmann::json value, const std::vector<Macro>& macros) {
  for (auto it = macros.rbegin(); it != macros.rend(); ++it) {
    value = ExpandMacro(std::move(value), it->name, it->value);
  }
  return value;
}

std::vector<std::string> FindMacroRefs(std::string_view text) {
  std::vector<std::string> refs;
  size_t at = 0;
  while ((at = text.find("${", at)) != std::string_view::npos) {
    size_t j = at + 2;
    while (j < text.size() && IsMacroNameChar(text[j])) ++j;
    if (j > at + 2 && j < text.size() && text[j] == '}') {
      refs.emplace_back(text.substr(at + 2, j - at - 2));
      at = j + 1;
    } else {
      at += 2;
    }
  }
  return refs;
}

std::vector<std::string> FindMacroRefsInJson(const nlohmann::json& value) {
  std::vector<std::string> refs;
  CollectRefs(value, refs);
  return refs;
}

}  // namespace swapd
