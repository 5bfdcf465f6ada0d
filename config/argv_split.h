// Turning a `cmd` / `cmdStop` string into argv the way llama-swap does, without any shell:
// lines whose first non-blank character is `#` are dropped, a line ending in a backslash is joined
// with the next, and the rest is split into words by POSIX shell rules (single quotes keep
// everything, double quotes keep everything but \$ \` \" \\ escapes, a backslash outside quotes
// escapes the next character). Unlike llama-swap, an unterminated quote is an error.
// Pure functions; thread safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace swapd {

// Drops the lines whose first non-blank character is `#` (llama-swap strips them before macro
// expansion, so a commented-out line may mention an unknown macro).
std::string StripCommentLines(std::string_view text);

// Comment lines dropped, trailing-backslash lines joined, then split into words. Errors name
// the problem ("unterminated double quote"); the caller adds the model and field.
Result<std::vector<std::string>> SplitCommand(std::string_view command);

// Whether `text` holds a Windows path such as `C:\Users`, whose backslashes POSIX splitting
// would eat (llama-swap on Linux does the same).
bool HasWindowsPath(std::string_view text);

// The hint given for such a text.
inline constexpr std::string_view kWindowsPathHint =
    "looks like a Windows command line: it is split like a POSIX shell would, where a backslash "
    "escapes the next character (C:\\x becomes C:x); use forward slashes";

}  // namespace swapd
