// STUB: replaced by the config implementation.
#include "config/loader.h"

namespace swapd {

std::string LoadResult::ErrorText() const {
  std::string out;
  for (const auto& d : diagnostics) out += d.ToString() + "\n";
  return out;
}

LoadResult LoadConfig(const LoadOptions&) { return {}; }
LoadResult ParseConfig(std::string_view, std::string_view, const LoadOptions&) { return {}; }

}  // namespace swapd
