#include "check/shell_quote.h"

#include <cstdio>

namespace swapd {

std::string QuoteWord(std::string_view word) {
  if (word.empty()) return "''";
  bool control = false, special = false;
  for (char ch : word) {
    auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) control = true;
    if (c == ' ' || c == '\'' || c == '"') special = true;
  }
  if (control) {
    std::string out = "$'";
    for (char ch : word) {
      auto c = static_cast<unsigned char>(ch);
      switch (ch) {
        case '\n':
          out += "\\n";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\'':
          out += "\\'";
          break;
        default:
          if (c < 0x20 || c == 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof(hex), "\\x%02x", c);
            out += hex;
          } else {
            out += ch;
          }
      }
    }
    return out + "'";
  }
  if (!special) return std::string(word);
  std::string out = "'";
  for (char ch : word) {
    if (ch == '\'') {
      out += "'\\''";
    } else {
      out += ch;
    }
  }
  return out + "'";
}

}  // namespace swapd
