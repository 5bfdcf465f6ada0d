// JsonText: a JSON value as text, which never throws. nlohmann's plain dump() throws on a string
// that is not UTF-8, and such strings reach swapd from outside: a model's output (a random or
// broken model emits partial byte tokens), a backend's log line, a config written in Latin-1.
// Their bad bytes become U+FFFD instead.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace swapd {

inline std::string JsonText(const nlohmann::json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// `text` with every byte that is not part of valid UTF-8 replaced by U+FFFD.
inline std::string ValidUtf8(const std::string& text) {
  return nlohmann::json::parse(JsonText(text)).get<std::string>();
}

}  // namespace swapd
