// Ollama's API translated to OpenAI's, answers side: a /v1/chat/completions answer (whole, or its
// SSE stream piece by piece) becomes /api/chat's or /api/generate's (one JSON object, or NDJSON
// lines ending with the `done` one), an /v1/embeddings answer becomes /api/embed's or
// /api/embeddings', and an OpenAI error an Ollama one. The counts and durations of the final
// object come from the backend's `usage` and llama-server's `timings`, else from the clock.
// Pure but for the clock; an OllamaStream is used by one thread at a time.
#pragma once

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace swapd {

enum class OllamaApi { kChat, kGenerate };

// What the clock says about one request; the durations Ollama reports in nanoseconds.
struct OllamaClock {
  std::chrono::steady_clock::time_point arrived;  // the request's
  std::chrono::nanoseconds load{0};  // the model's start, when this request waited for it
};

// The final object's counts and durations: prompt_eval_count/_duration, eval_count/_duration
// from `usage` and `timings` (either may be null), total_duration and load_duration from `clock`.
// `first_token`: when the first generated text arrived (a stream's), for a backend without
// timings; the epoch when unknown.
void AddOllamaCounts(const nlohmann::json& usage, const nlohmann::json& timings,
                     const OllamaClock& clock, std::chrono::steady_clock::time_point first_token,
                     nlohmann::json& out);

// "stop" or "length" (OpenAI's "tool_calls" and others are a stop).
std::string OllamaDoneReason(const nlohmann::json& finish_reason);

// OpenAI's tool_calls as Ollama's: [{"function": {"name", "arguments": OBJECT}}] (a string of
// arguments that is not JSON is kept as a string).
nlohmann::json OllamaToolCalls(const nlohmann::json& tool_calls);

// A whole /v1/chat/completions answer as the one object of /api/chat or /api/generate.
nlohmann::json OllamaAnswerOf(const nlohmann::json& completion, const std::string& model,
                              OllamaApi api, const OllamaClock& clock);

// A whole /v1/embeddings answer as /api/embed's ({"embeddings": [[...]]}) or, `legacy`,
// /api/embeddings' ({"embedding": [...]}).
nlohmann::json OllamaEmbeddingsOf(const nlohmann::json& answer, const std::string& model,
                                  bool legacy, const OllamaClock& clock);

// An error answer (OpenAI's {"error":{"message"}}, {"error": "..."}, or any text) as the
// message of Ollama's {"error": "..."}.
std::string OllamaErrorMessage(std::string_view body);

// A /v1/chat/completions SSE stream turned into NDJSON as it arrives: each piece of text (and
// reasoning) becomes one line; tool calls, gathered across chunks, go out in one line before the
// last; the last ({"done": true, ...}) goes out at "data: [DONE]" or at Finish.
class OllamaStream {
 public:
  OllamaStream(std::string model, OllamaApi api, OllamaClock clock);

  // Takes some bytes of the SSE stream; returns the NDJSON lines they complete ("" for none).
  std::string Feed(std::string_view sse);
  // The stream ended: the final line unless it went out already.
  std::string Finish();
  bool done() const { return done_; }

 private:
  std::string Event(std::string_view data);
  std::string Line(nlohmann::json message_part);
  std::string Final();

  const std::string model_;
  const OllamaApi api_;
  const OllamaClock clock_;
  std::string pending_;  // an incomplete line of the SSE stream
  bool done_ = false;
  nlohmann::json finish_reason_;
  nlohmann::json usage_;
  nlohmann::json timings_;
  std::map<int, nlohmann::json> tool_calls_;  // by index: {id, function: {name, arguments}}
  std::chrono::steady_clock::time_point first_token_{};
};

}  // namespace swapd
