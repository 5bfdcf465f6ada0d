// Standard base64 (RFC 4648, with the + and / alphabet): API keys of Basic authentication are
// decoded, captured request and response bodies are encoded for GET /api/captures/{id}. Pure;
// thread safe.
#pragma once

#include <string>
#include <string_view>

namespace swapd {

// With = padding, as Go's encoding/json writes a []byte.
std::string EncodeBase64(std::string_view bytes);
// Padding optional. Empty on invalid input.
std::string DecodeBase64(std::string_view text);

}  // namespace swapd
