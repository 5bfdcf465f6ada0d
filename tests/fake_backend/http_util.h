// Small response helpers shared by fake-llama-server's route files: JSON bodies in llama-server's
// content type and its OpenAI-shaped error objects. Stateless; thread safe.
#pragma once

#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace fake_backend {

// llama-server's JSON content type. The charset suffix also keeps cpp-httplib (built with zlib on
// Debian) from gzip-compressing the body, which llama-server never does.
inline constexpr const char* kJsonContentType = "application/json; charset=utf-8";

// Serializes without throwing on invalid UTF-8 (request bodies are echoed back verbatim).
inline std::string Dump(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

inline void SendJson(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(Dump(body), kJsonContentType);
}

// {"error":{"code":..,"message":..,"type":..}}, as llama-server shapes errors.
inline nlohmann::json ErrorBody(int code, const std::string& message, const std::string& type) {
  return {{"error", {{"code", code}, {"message", message}, {"type", type}}}};
}

inline void SendError(httplib::Response& res, int code, const std::string& message,
                      const std::string& type) {
  SendJson(res, code, ErrorBody(code, message, type));
}

}  // namespace fake_backend
