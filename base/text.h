// Small text helpers every layer needs, ASCII only: trimming whitespace, lines, hex digits, lower
// case, a number with fixed decimals, joining a list for a message. Pure; thread safe.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace swapd {

// ASCII whitespace as Go's strings.TrimSpace and C's isspace see it: space, \t, \n, \v, \f, \r.
inline bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// `s` without leading and trailing ASCII whitespace.
inline std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && IsAsciiSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsAsciiSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Calls `each(line)` for each line of `text`, without its '\n'; a last line without one too.
template <typename Each>
void ForEachLine(std::string_view text, Each each) {
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    each(text.substr(begin, end - begin));
    begin = end + 1;
  }
}

// The value of the hex digit `c` (0-9, a-f, A-F), or -1.
inline int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// `s` with A-Z lowered.
inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// `value` with `decimals` digits after the point: FixedPoint(2.345, 1) is "2.3".
inline std::string FixedPoint(double value, int decimals) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

// The items of `list` (any range of strings) joined by `separator`: "a, b"; `none` when it is
// empty.
template <typename List>
std::string Join(const List& list, std::string_view separator = ", ", std::string_view none = "") {
  std::string out;
  bool first = true;
  for (const auto& item : list) {
    if (!first) out += separator;
    out += item;
    first = false;
  }
  return first ? std::string(none) : out;
}

}  // namespace swapd
