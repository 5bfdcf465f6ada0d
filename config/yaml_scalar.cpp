#include "config/yaml_scalar.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <regex>

namespace swapd {
namespace {

constexpr std::string_view kTagPrefix = "tag:yaml.org,2002:";

bool IsNullText(std::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

// Go's strconv.ParseUint(s, 0, 64) for an unsigned body (prefixes 0x, 0o, 0b, and a leading 0
// meaning octal).
std::optional<uint64_t> ParseGoUnsigned(std::string_view s) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) {
    base = 8;
    s.remove_prefix(2);
  } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
    base = 2;
    s.remove_prefix(2);
  } else if (s.size() > 1 && s[0] == '0') {
    base = 8;
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// An int as yaml.v3 resolves it (underscores dropped, optional sign, Go base prefixes).
std::optional<nlohmann::json> ResolveInt(std::string text) {
  std::erase(text, '_');
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  auto u = ParseGoUnsigned(s);
  if (!u) return std::nullopt;
  if (negative) {
    if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) return std::nullopt;
    return nlohmann::json(static_cast<int64_t>(0 - *u));
  }
  if (*u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return nlohmann::json(static_cast<int64_t>(*u));
  }
  return nlohmann::json(*u);
}

std::optional<nlohmann::json> ResolveFloat(std::string text) {
  static const std::regex kYamlFloat(R"(^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$)");
  std::erase(text, '_');
  if (!std::regex_match(text, kYamlFloat)) return std::nullopt;
  std::string_view s = text;
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return nlohmann::json(v);
}

nlohmann::json ResolvePlain(const std::string& text) {
  if (IsNullText(text)) return nullptr;
  if (auto b = Yaml12Bool(text)) return *b;
  char c = text[0];
  if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') {
    if (auto i = ResolveInt(text)) return *i;
    if (auto f = ResolveFloat(text)) return *f;
  }
  return text;
}

}  // namespace

std::optional<bool> Yaml12Bool(std::string_view t) {
  if (t == "true" || t == "True" || t == "TRUE") return true;
  if (t == "false" || t == "False" || t == "FALSE") return false;
  return std::nullopt;
}

std::optional<bool> Yaml11Bool(std::string_view t) {
  static constexpr std::array<std::string_view, 8> kTrue = {"y",   "Y",  "yes", "Yes",
                                                            "YES", "on", "On",  "ON"};
  static constexpr std::array<std::string_view, 8> kFalse = {"n",  "N",   "no",  "No",
                                                             "NO", "off", "Off", "OFF"};
  for (auto s : kTrue) {
    if (t == s) return true;
  }
  for (auto s : kFalse) {
    if (t == s) return false;
  }
  return std::nullopt;
}

nlohmann::json ScalarToJson(const YamlNode& node) {
  if (node.is_null()) return nullptr;
  if (node.plain) return ResolvePlain(node.value);
  if (node.tag.rfind(kTagPrefix, 0) == 0) {
    std::string_view type = std::string_view(node.tag).substr(kTagPrefix.size());
    if (type == "null") return nullptr;
    if (type == "bool") {
      if (auto b = Yaml12Bool(node.value)) return *b;
    }
    if (type == "int") {
      if (auto i = ResolveInt(node.value)) return *i;
    }
    if (type == "float") {
      if (auto i = ResolveInt(node.value)) return static_cast<double>(i->get<int64_t>());
      if (auto f = ResolveFloat(node.value)) return *f;
    }
  }
  return node.value;
}

nlohmann::json NodeToJson(const YamlNode& node) {
  switch (node.kind) {
    case YamlNode::Kind::kNull:
    case YamlNode::Kind::kScalar:
      return ScalarToJson(node);
    case YamlNode::Kind::kSequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : node.items) out.push_back(NodeToJson(*item));
      return out;
    }
    case YamlNode::Kind::kMap: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& e : node.entries) out[e.key->value] = NodeToJson(*e.value);
      return out;
    }
  }
  return nullptr;
}

std::string GoFormat(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_integer()) return value.dump();
  if (value.is_null()) return "<nil>";
  if (!value.is_number_float()) return value.dump();

  double v = value.get<double>();
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  // Shortest round-trip digits laid out as Go's strconv 'g' with precision -1 does: exponent
  // form when the decimal exponent is < -4 or >= 6 (so 1e6 prints "1e+06", 123456.0 "123456").
  std::array<char, 64> buf{};
  auto [end, ec] =
      std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::scientific);
  if (ec != std::errc()) return value.dump();
  std::string sci(buf.data(), end);  // e.g. "-1.234e+06"
  bool negative = sci[0] == '-';
  if (negative) sci.erase(0, 1);
  size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  std::erase(digits, '.');
  int exp = std::stoi(sci.substr(e + 1));

  std::string out = negative ? "-" : "";
  if (exp < -4 || exp >= 6) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += exp < 0 ? "e-" : "e+";
    int a = exp < 0 ? -exp : exp;
    if (a < 10) out += "0";
    out += std::to_string(a);
    return out;
  }
  int point = exp + 1;  // digits before the decimal point
  if (point <= 0) {
    out += "0." + std::string(static_cast<size_t>(-point), '0') + digits;
  } else if (static_cast<size_t>(point) >= digits.size()) {
    out += digits + std::string(static_cast<size_t>(point) - digits.size(), '0');
  } else {
    out += digits.substr(0, static_cast<size_t>(point)) + "." +
           digits.substr(static_cast<size_t>(point));
  }
  return out;
}

}  // namespace swapd
