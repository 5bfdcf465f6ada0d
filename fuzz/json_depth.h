// NestsDeeperThan: the fuzz targets' own reading of JSON nesting, as an oracle for the depth limit
// that ScanJson enforces (frontdoor/json_scan.h): it counts brackets outside strings, without
// parsing. Pure; thread safe.
#pragma once

#include <cstddef>
#include <string_view>

namespace swapd {

// Whether arrays and objects in `text` nest deeper than `limit`.
inline bool NestsDeeperThan(std::string_view text, size_t limit) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

}  // namespace swapd
