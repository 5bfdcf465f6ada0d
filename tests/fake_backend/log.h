// Writes fake-llama-server's log to stdout, one whole line per write(2) so that lines from
// concurrent requests never interleave and nothing waits in a stdio buffer when stdout is a pipe
// (swapd reads it live). Thread safe.
#pragma once

#include <string_view>

namespace fake_backend {

// Writes `line` and a newline. Errors (a closed pipe) are ignored.
void LogLine(std::string_view line);

// Writes `text` as is, in large writes (used for the start-up burst of --log-lines).
void LogRaw(std::string_view text);

}  // namespace fake_backend
