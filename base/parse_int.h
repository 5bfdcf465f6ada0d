// Whole-text integer parsing, for the figures that tools and /proc print: the text must be a
// decimal number and nothing else (no sign but '-', no spaces).
#pragma once

#include <charconv>
#include <cstdint>
#include <string_view>

namespace swapd {

inline bool ParseInt64(std::string_view text, int64_t* out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size() && !text.empty();
}

}  // namespace swapd
