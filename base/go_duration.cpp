#include "base/go_duration.h"

#include <cctype>
#include <cstdlib>
#include <map>
#include <string>

namespace swapd {

std::optional<double> ParseGoDuration(std::string_view text) {
  static const std::map<std::string_view, double> kUnits = {
      {"ns", 1e-9}, {"us", 1e-6}, {"µs", 1e-6}, {"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}};
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text == "0") return 0.0;
  if (text.empty()) return std::nullopt;
  double total = 0;
  while (!text.empty()) {
    size_t digits = 0;
    while (digits < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.')) {
      ++digits;
    }
    if (digits == 0) return std::nullopt;
    const double number = std::strtod(std::string(text.substr(0, digits)).c_str(), nullptr);
    text.remove_prefix(digits);
    size_t unit = 0;
    while (unit < text.size() && !std::isdigit(static_cast<unsigned char>(text[unit])) &&
           text[unit] != '.') {
      ++unit;
    }
    auto found = kUnits.find(text.substr(0, unit));
    if (found == kUnits.end()) return std::nullopt;
    total += number * found->second;
    text.remove_prefix(unit);
  }
  return negative ? -total : total;
}

}  // namespace swapd
