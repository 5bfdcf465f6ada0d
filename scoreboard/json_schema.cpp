#include "scoreboard/json_schema.h"

#include <cctype>
#include <cmath>
#include <regex>
#include <set>

namespace swapd {
namespace {

using nlohmann::json;

const std::set<std::string>& TypeNames() {
  static const std::set<std::string> names = {"object",  "array",   "string", "number",
                                              "integer", "boolean", "null"};
  return names;
}

const std::set<std::string>& Annotations() {
  static const std::set<std::string> names = {"$schema",     "$id",     "$comment", "title",
                                              "description", "default", "examples"};
  return names;
}

bool IsCount(const json& v) {
  return (v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0));
}

// Appends `token` to a JSON pointer, escaped as RFC 6901 asks.
std::string Pointer(const std::string& base, const std::string& token) {
  std::string out = base + "/";
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

void CheckNode(const json& schema, const std::string& at, std::vector<SchemaProblem>& out) {
  auto problem = [&](const std::string& where, std::string message) {
    out.push_back({where, std::move(message)});
  };
  if (!schema.is_object()) {
    problem(at, "a schema must be a map");
    return;
  }
  for (const auto& [key, v] : schema.items()) {
    const std::string here = Pointer(at, key);
    if (key == "type") {
      const json names = v.is_array() ? v : json::array({v});
      if (names.empty()) problem(here, "type lists no type");
      for (const json& name : names) {
        if (!name.is_string() || TypeNames().count(name.get<std::string>()) == 0) {
          problem(here, "unknown type " + name.dump() +
                            " (object, array, string, number, integer, boolean, null)");
        }
      }
    } else if (key == "properties") {
      if (!v.is_object()) {
        problem(here, "properties must be a map of schemas");
        continue;
      }
      for (const auto& [name, sub] : v.items()) CheckNode(sub, Pointer(here, name), out);
    } else if (key == "required") {
      bool names = v.is_array();
      for (const json& name : names ? v : json::array()) names = names && name.is_string();
      if (!names) problem(here, "required must be a list of property names");
    } else if (key == "additionalProperties") {
      if (!v.is_boolean()) problem(here, "additionalProperties must be true or false");
    } else if (key == "items") {
      if (v.is_object()) {
        CheckNode(v, here, out);
      } else {
        problem(here, "items must be one schema (lists of schemas are not supported)");
      }
    } else if (key == "enum") {
      if (!v.is_array() || v.empty()) problem(here, "enum must be a non-empty list");
    } else if (key == "const") {
      // any value
    } else if (key == "minItems" || key == "maxItems" || key == "minLength" || key == "maxLength") {
      if (!IsCount(v)) problem(here, key + " must be a whole number >= 0");
    } else if (key == "minimum" || key == "maximum") {
      if (!v.is_number()) problem(here, key + " must be a number");
    } else if (key == "pattern") {
      if (!v.is_string()) {
        problem(here, "pattern must be a string");
        continue;
      }
      try {
        std::regex(v.get<std::string>(), std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        problem(here, "bad pattern " + v.dump() + ": " + e.what());
      }
    } else if (Annotations().count(key) == 0) {
      problem(here, "unknown keyword \"" + key + "\" (not in the supported subset of JSON Schema)");
    }
  }
}

std::string TypeOf(const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::string:
      return "string";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    default:
      return "null";
  }
}

bool HasType(const json& v, const std::string& type) {
  const std::string actual = TypeOf(v);
  if (type == actual) return true;
  if (type == "number") return actual == "integer";
  if (type == "integer" && v.is_number_float()) {
    const double d = v.get<double>();
    return std::isfinite(d) && d == std::floor(d);
  }
  return false;
}

// The value for a message, cut short when long.
std::string Show(const json& v) {
  std::string text = v.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

std::string Child(const std::string& path, const std::string& key) {
  bool plain = !key.empty() && !std::isdigit(static_cast<unsigned char>(key[0]));
  for (char c : key) plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  return plain ? path + "." + key : path + "[" + json(key).dump() + "]";
}

size_t CodePoints(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string Match(const json& schema, const json& v, const std::string& path) {
  if (auto type = schema.find("type"); type != schema.end()) {
    const json names = type->is_array() ? *type : json::array({*type});
    bool any = false;
    std::string expected;
    for (const json& name : names) {
      any = any || HasType(v, name.get<std::string>());
      expected += (expected.empty() ? "" : " or ") + name.get<std::string>();
    }
    if (!any) return path + ": expected " + expected + ", got " + TypeOf(v);
  }
  if (auto e = schema.find("enum"); e != schema.end()) {
    bool found = false;
    for (const json& option : *e) found = found || option == v;
    if (!found) return path + ": " + Show(v) + " is not one of " + Show(*e);
  }
  if (auto c = schema.find("const"); c != schema.end() && *c != v) {
    return path + ": expected " + Show(*c) + ", got " + Show(v);
  }
  if (v.is_object()) {
    for (const json& name : schema.value("required", json::array())) {
      if (!v.contains(name.get<std::string>())) {
        return path + ": missing required property " + name.dump();
      }
    }
    const json properties = schema.value("properties", json::object());
    for (const auto& [key, item] : v.items()) {
      if (auto sub = properties.find(key); sub != properties.end()) {
        std::string why = Match(*sub, item, Child(path, key));
        if (!why.empty()) return why;
      } else if (!schema.value("additionalProperties", true)) {
        return path + ": unexpected property " + json(key).dump();
      }
    }
  }
  if (v.is_array()) {
    if (auto m = schema.find("minItems"); m != schema.end() && v.size() < m->get<size_t>()) {
      return path + ": " + std::to_string(v.size()) + " items, expected at least " + m->dump();
    }
    if (auto m = schema.find("maxItems"); m != schema.end() && v.size() > m->get<size_t>()) {
      return path + ": " + std::to_string(v.size()) + " items, expected at most " + m->dump();
    }
    if (auto items = schema.find("items"); items != schema.end()) {
      for (size_t i = 0; i < v.size(); ++i) {
        std::string why = Match(*items, v[i], path + "[" + std::to_string(i) + "]");
        if (!why.empty()) return why;
      }
    }
  }
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    const size_t length = CodePoints(s);
    if (auto m = schema.find("minLength"); m != schema.end() && length < m->get<size_t>()) {
      return path + ": length " + std::to_string(length) + ", expected at least " + m->dump();
    }
    if (auto m = schema.find("maxLength"); m != schema.end() && length > m->get<size_t>()) {
      return path + ": length " + std::to_string(length) + ", expected at most " + m->dump();
    }
    if (auto p = schema.find("pattern"); p != schema.end()) {
      try {
        if (!std::regex_search(s, std::regex(p->get<std::string>(), std::regex::ECMAScript))) {
          return path + ": " + Show(v) + " does not match pattern " + p->get<std::string>();
        }
      } catch (const std::regex_error& e) {  // too complex to match
        return path + ": pattern " + p->get<std::string>() + " failed: " + e.what();
      }
    }
  }
  if (v.is_number()) {
    const double d = v.get<double>();
    if (auto m = schema.find("minimum"); m != schema.end() && d < m->get<double>()) {
      return path + ": " + Show(v) + " is below the minimum " + m->dump();
    }
    if (auto m = schema.find("maximum"); m != schema.end() && d > m->get<double>()) {
      return path + ": " + Show(v) + " is above the maximum " + m->dump();
    }
  }
  return "";
}

}  // namespace

std::vector<SchemaProblem> CheckSchema(const nlohmann::json& schema) {
  std::vector<SchemaProblem> out;
  CheckNode(schema, "", out);
  return out;
}

std::string SchemaMismatch(const nlohmann::json& schema, const nlohmann::json& value) {
  return Match(schema, value, "$");
}

}  // namespace swapd
