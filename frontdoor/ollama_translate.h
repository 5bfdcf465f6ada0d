// Ollama's API translated to OpenAI's, requests side: an Ollama /api/chat, /api/generate,
// /api/embed or /api/embeddings body becomes the body of the model's /v1/chat/completions or
// /v1/embeddings (options, format, images, tools, think), and keep_alive is read. The answers'
// side is ollama_answer.h. Pure; thread safe.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/status.h"

namespace swapd {

// What `keep_alive` asks of the model once the request is answered.
struct KeepAlive {
  enum class Kind {
    kDefault,  // absent: the model's ttl applies
    kUnload,   // 0, "0", "0s": unload it after the answer
    kForever,  // negative: keep it loaded
    kFor,      // a positive duration
  };
  Kind kind = Kind::kDefault;
  std::chrono::seconds duration{0};  // kFor's
};

// A number (seconds) or a Go duration ("5m", "1h30m", "-1m", "0s", "300ms"); null is absent.
Result<KeepAlive> ParseKeepAlive(const nlohmann::json& value);

// An Ollama request, translated.
struct OllamaRequest {
  std::string model;  // as the client named it
  bool stream = true;
  KeepAlive keep_alive;
  std::string route = "/v1/chat/completions";  // the model's route it goes to
  nlohmann::json openai;                       // the OpenAI request body (its "model" is `model`)
  // A chat without messages, a generate without prompt or images: Ollama's way to load a model
  // (or, with keep_alive 0, to unload it) without generating.
  bool load_only = false;
};

// /api/chat -> /v1/chat/completions. kInvalidArgument (400) for a body of the wrong shape.
Result<OllamaRequest> ChatRequestFromOllama(const nlohmann::json& body);
// /api/generate -> /v1/chat/completions: `system` and `prompt` (+ `images`) as messages; with
// `raw: true`, the prompt as it is to /v1/completions (no template; `system` is not sent, as
// Ollama's raw mode ignores it). A `suffix` is refused (kInvalidArgument): OpenAI's routes have
// no place for it that llama-server and vLLM honour.
Result<OllamaRequest> GenerateRequestFromOllama(const nlohmann::json& body);
// /api/embed ({"input": string or strings}) or, `legacy`, /api/embeddings ({"prompt": string})
// -> /v1/embeddings. `stream` is false.
Result<OllamaRequest> EmbedRequestFromOllama(const nlohmann::json& body, bool legacy);

// "data:image/png;base64,<base64>" (jpeg, gif, webp told from the data's first bytes; png
// otherwise). An image given as a data URL already is kept as it is.
std::string ImageDataUrl(const std::string& base64);

}  // namespace swapd
