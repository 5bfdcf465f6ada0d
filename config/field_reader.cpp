#include "config/field_reader.h"

#include <cmath>

#include "config/yaml_scalar.h"

namespace swapd {

std::string Describe(const YamlNode& node) {
  if (node.is_scalar()) return "\"" + node.value + "\"";
  return std::string(KindName(node.kind));
}

void FieldReader::CheckKeys(const YamlNode& map, const KeySet& keys, const std::string& context,
                            const std::string& path) {
  // "models.*.filters." shows as "filters.": the context already names the model.
  size_t star = path.rfind("*.");
  const std::string shown = star == std::string::npos ? path : path.substr(star + 2);
  for (const auto& e : map.entries) {
    if (!e.key->is_scalar()) {
      sink_.Error(e.key->pos, context + "a key must be a plain name, not " +
                                  std::string(KindName(e.key->kind)));
      continue;
    }
    const std::string& key = e.key->value;
    if (keys.IsSupported(key)) continue;
    if (keys.IsUnsupported(key)) {
      auto [it, inserted] = unsupported_.try_emplace(path + key);
      if (inserted) it->second = Unsupported{context + shown + key, e.key->pos, 0};
      ++it->second.count;
      continue;
    }
    std::string message = context + "unknown key " + shown + key;
    if (auto suggestion = keys.Suggest(key)) message += " (did you mean " + *suggestion + "?)";
    if (strict_) {
      sink_.Error(e.key->pos, message);
    } else {
      sink_.Warning(e.key->pos, message + "; ignored");
    }
  }
}

void FieldReader::ReportUnsupported() {
  for (const auto& [path, u] : unsupported_) {
    std::string message = u.key + ": not supported yet, ignored";
    if (u.count > 1) {
      message += " (and in " + std::to_string(u.count - 1) + " more place" +
                 (u.count > 2 ? "s" : "") + ")";
    }
    sink_.Warning(u.first, message);
  }
  unsupported_.clear();
}

void FieldReader::TypeError(const YamlEntry& e, const std::string& context,
                            const std::string& expected) {
  sink_.Error(e.value->pos,
              context + e.key->value + ": expected " + expected + ", got " + Describe(*e.value));
}

std::optional<RawText> FieldReader::Text(const YamlEntry& e, const std::string& context) {
  if (e.value->is_null()) return std::nullopt;
  if (!e.value->is_scalar()) {
    TypeError(e, context, "a string");
    return std::nullopt;
  }
  return RawText{e.value->value, e.value};
}

std::optional<int64_t> FieldReader::Int(const YamlEntry& e, const std::string& context) {
  if (e.value->is_null()) return std::nullopt;
  nlohmann::json v = e.value->is_scalar() ? ScalarToJson(*e.value) : nlohmann::json();
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) {
      return static_cast<int64_t>(d);
    }
  }
  TypeError(e, context, "an integer");
  return std::nullopt;
}

std::optional<bool> FieldReader::Bool(const YamlEntry& e, const std::string& context) {
  if (e.value->is_null()) return std::nullopt;
  if (e.value->is_scalar()) {
    if (e.value->plain) {
      if (auto b = Yaml12Bool(e.value->value)) return *b;
    }
    if (auto b = Yaml11Bool(e.value->value)) {
      sink_.Hint(e.value->pos, context + e.key->value + ": \"" + e.value->value + "\" is read as " +
                                   (*b ? "true" : "false") +
                                   " (a YAML 1.1 boolean; llama-swap reads it the same way here, "
                                   "but as a string elsewhere: prefer " +
                                   (*b ? "true" : "false") + ")");
      return *b;
    }
  }
  TypeError(e, context, "true or false");
  return std::nullopt;
}

std::vector<RawText> FieldReader::TextList(const YamlEntry& e, const std::string& context) {
  std::vector<RawText> out;
  if (e.value->is_null()) return out;
  if (!e.value->is_sequence()) {
    TypeError(e, context, "a list");
    return out;
  }
  for (const auto& item : e.value->items) {
    if (item->is_null()) continue;  // `- ` with nothing (often a commented-out value)
    if (!item->is_scalar()) {
      sink_.Error(item->pos, context + e.key->value + ": expected a string in the list, got " +
                                 Describe(*item));
      continue;
    }
    out.push_back(RawText{item->value, item});
  }
  return out;
}

bool FieldReader::IsMapOrError(const YamlEntry& e, const std::string& context) {
  if (e.value->is_map()) return true;
  if (!e.value->is_null()) TypeError(e, context, "a map");
  return false;
}

}  // namespace swapd
