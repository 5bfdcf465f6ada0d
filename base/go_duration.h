// Go's duration text ("1h30m", "5m", "10s", "300ms", "-1m"), as llama-swap's YAML (time.Duration)
// and Ollama's keep_alive write it, read to seconds. Pure; thread safe.
#pragma once

#include <optional>
#include <string_view>

namespace swapd {

// Seconds; nullopt when `text` is not a Go duration. A bare "0" is 0, as in Go.
std::optional<double> ParseGoDuration(std::string_view text);

}  // namespace swapd
