// Byte sizes the tests write memory figures with.
#pragma once

#include <cstdint>

namespace swapd::testing {

inline constexpr int64_t kMiB = int64_t{1} << 20;
inline constexpr uint64_t kGiB = uint64_t{1} << 30;

}  // namespace swapd::testing
