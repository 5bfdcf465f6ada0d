// UnixNow: the wall clock in whole seconds since 1970 (UTC), as stored and as OpenAI's `created`.
#pragma once

#include <chrono>
#include <cstdint>

namespace swapd {

inline int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace swapd
