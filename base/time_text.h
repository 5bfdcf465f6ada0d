// Times as the HTTP API writes and reads them: RFC 3339 in UTC ("2026-12-05T16:30:00Z"), and
// RFC 3339 with any offset and optional fractions read back to Unix seconds. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace swapd {

std::string Rfc3339(int64_t unix_seconds);
// nullopt unless `text` is a whole RFC 3339 date-time ("2026-12-05T17:30:00+01:00").
std::optional<int64_t> ParseRfc3339(std::string_view text);

}  // namespace swapd
