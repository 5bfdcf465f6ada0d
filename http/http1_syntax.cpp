#include "http/http1_syntax.h"

#include <algorithm>
#include <charconv>
#include <iterator>

namespace swapd {

namespace {

// ASCII only, as HTTP field names are: std::tolower would consult the locale for every byte.
char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return AsciiLower(x) == AsciiLower(y);
         });
}

bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && EqualsIgnoreCase(s.substr(0, prefix.size()), prefix);
}

std::string_view TrimWhitespace(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string_view LastListElement(std::string_view list) {
  size_t comma = list.rfind(',');
  return TrimWhitespace(comma == std::string_view::npos ? list : list.substr(comma + 1));
}

bool ListContains(std::string_view list, std::string_view token) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    if (EqualsIgnoreCase(TrimWhitespace(list.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

bool ParseDecimal(std::string_view s, uint64_t& out) {
  if (s.empty() || s.size() > 18 || s.front() < '0' || s.front() > '9') return false;
  auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), out);
  return error == std::errc() && end == s.data() + s.size();
}

void AppendDecimal(std::string& out, uint64_t n) {
  char digits[20];  // UINT64_MAX has 20 digits
  const auto written = std::to_chars(std::begin(digits), std::end(digits), n);
  out.append(digits, written.ptr);
}

bool SplitFieldLine(std::string_view line, std::string_view& name, std::string_view& value) {
  size_t colon = line.find(':');
  if (colon == 0 || colon == std::string_view::npos || line[0] == ' ' || line[0] == '\t' ||
      line[colon - 1] == ' ' || line[colon - 1] == '\t') {
    return false;
  }
  name = line.substr(0, colon);
  value = TrimWhitespace(line.substr(colon + 1));
  return true;
}

}  // namespace swapd
