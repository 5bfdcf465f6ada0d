// Small pieces of HTTP/1.1 syntax (RFC 9110, 9112) shared by the request and response parsers:
// case-insensitive comparison, trimming, comma-separated lists, decimal numbers, field lines.
// Pure; thread safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace swapd {

bool EqualsIgnoreCase(std::string_view a, std::string_view b);
bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix);

// Without the spaces and tabs at either end.
std::string_view TrimWhitespace(std::string_view s);

// The last element of a comma-separated list such as "gzip, chunked".
std::string_view LastListElement(std::string_view list);

// Whether the comma-separated `list` holds `token` (case-insensitive).
bool ListContains(std::string_view list, std::string_view token);

// A non-negative decimal of at most 18 digits, nothing else.
bool ParseDecimal(std::string_view s, uint64_t& out);

// Appends `n` in decimal (a Content-Length, a status), without a temporary string.
void AppendDecimal(std::string& out, uint64_t n);

// Splits "Name: value" (value trimmed). False for a line that is not a field: no colon, an empty
// name, or whitespace before the colon or at the start (obsolete line folding).
bool SplitFieldLine(std::string_view line, std::string_view& name, std::string_view& value);

}  // namespace swapd
