#include "frontdoor/auth.h"

#include "base/text.h"
#include "http/http1_syntax.h"

namespace swapd {
namespace {

// Compares in time that depends only on the lengths, not on where the first difference is.
bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = a.size() < b.size() ? a.size() : b.size();
  for (size_t i = 0; i < n; ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

bool MatchesAnyKey(const std::vector<std::string>& keys, std::string_view candidate) {
  bool found = false;
  for (const auto& key : keys) found |= ConstantTimeEquals(key, candidate);
  return found && !candidate.empty();
}

}  // namespace

bool IsAuthorized(const std::vector<std::string>& keys, std::string_view authorization,
                  std::string_view x_api_key) {
  if (keys.empty()) return true;
  if (MatchesAnyKey(keys, TrimSpace(x_api_key))) return true;
  authorization = TrimSpace(authorization);
  if (StartsWithIgnoreCase(authorization, "bearer ")) {
    return MatchesAnyKey(keys, TrimSpace(authorization.substr(7)));
  }
  if (StartsWithIgnoreCase(authorization, "basic ")) {
    std::string decoded = DecodeBase64(TrimSpace(authorization.substr(6)));
    size_t colon = decoded.find(':');
    if (colon == std::string::npos) return false;
    return MatchesAnyKey(keys, std::string_view(decoded).substr(colon + 1));
  }
  return false;
}

}  // namespace swapd
