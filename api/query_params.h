// Reading a route's query parameters the one way every /api route does: surrounding blanks
// ignored, a malformed value an InvalidArgument Status (a 400) whose message the route chooses.
// Pure functions; thread safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "http/message.h"

namespace swapd {

// ?name= as a whole number from `min` to `max`: unset when absent or blank; `wrong` (the error's
// message) when it is not a whole number in that range.
Result<std::optional<int64_t>> QueryInteger(const HttpRequest& req, const char* name, int64_t min,
                                            int64_t max, const std::string& wrong);

}  // namespace swapd
