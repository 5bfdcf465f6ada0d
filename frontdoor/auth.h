// API-key authentication (`apiKeys`): a request is authorized when no keys are configured, or it
// carries one of them as `Authorization: Bearer KEY`, `x-api-key: KEY`, or as the password of
// `Authorization: Basic base64(user:KEY)`. Keys are compared in constant time and never logged.
// Pure; thread safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/base64.h"  // DecodeBase64 (Basic credentials)

namespace swapd {

bool IsAuthorized(const std::vector<std::string>& keys, std::string_view authorization,
                  std::string_view x_api_key);

}  // namespace swapd
