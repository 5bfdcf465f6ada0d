// The three completion APIs of llama-server as the fake answers them: OpenAI chat
// (/v1/chat/completions), OpenAI text (/v1/completions) and llama.cpp's native /completion. A
// CompletionJob is parsed from the request body once, then turned into either one JSON response or
// a sequence of SSE events with the same text. Pure (no I/O); value types, not synchronized.
#pragma once

#include <ctime>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/fake_backend/generation.h"
#include "tests/fake_backend/options.h"

namespace fake_backend {

enum class CompletionApi { kChat, kText, kNative };

struct CompletionJob {
  CompletionApi api = CompletionApi::kChat;
  std::string id;     // "chatcmpl-..." / "cmpl-..."
  std::string model;  // echoes the request's model, else the server's model id
  std::time_t created = 0;
  std::string prompt;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  bool limit_reached = false;  // the request's max_tokens ended generation (finish "length")
  std::vector<std::string> tokens;
  Timings timings;
  // As a chat model with tools, vision and thinking would: a request with `tools` whose last
  // message is not a tool's result is answered with a call of the first tool, whose arguments
  // hold the prompt's first word ({"text": ...}), and no text; the media types of the image
  // parts are told in the answer ("image/png" words before the text); chat_template_kwargs
  // {"enable_thinking": true} adds reasoning_content.
  nlohmann::json tool_call;  // {"name", "arguments" (a JSON string)}, or null
  std::vector<std::string> image_types;
  std::string reasoning;
};

// Reads the fields the fake uses (model, messages/prompt, max_tokens / max_completion_tokens /
// n_predict, stream, stream_options). Returns false with *error set when the body has the wrong
// shape.
bool ParseCompletionJob(const nlohmann::json& body, CompletionApi api, const Options& options,
                        CompletionJob* job, std::string* error);

// The non-streamed response body, with `usage` and `timings`.
nlohmann::json CompletionResponse(const CompletionJob& job);

// Streamed events, in order: OpeningEvents, one TokenEvent per token, ClosingEvents, then
// "data: [DONE]" when SendsDone. Each returned JSON goes out as "data: <json>\n\n".
std::vector<nlohmann::json> OpeningEvents(const CompletionJob& job);
nlohmann::json TokenEvent(const CompletionJob& job, size_t index);
std::vector<nlohmann::json> ClosingEvents(const CompletionJob& job);
bool SendsDone(const CompletionJob& job);

// The concatenated generated text.
std::string GeneratedText(const CompletionJob& job);

}  // namespace fake_backend
