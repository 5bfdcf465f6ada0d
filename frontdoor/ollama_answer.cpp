#include "frontdoor/ollama_answer.h"

#include <algorithm>

#include "base/json_text.h"
#include "base/time_text.h"
#include "base/unix_time.h"

namespace swapd {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

int64_t OllamaNanos(Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
}

// A number field of `object`, else `fallback`.
double OllamaNumber(const json& object, const char* key, double fallback) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_number()) return fallback;
  return object[key].get<double>();
}

json OllamaHead(const std::string& model) {
  return {{"model", model}, {"created_at", Rfc3339(UnixNow())}};
}

// The text of an OpenAI message or delta's `content` (a string, or text parts).
std::string OllamaTextOf(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (content.is_array()) {
    for (const json& part : content) {
      if (part.is_object() && part.contains("text") && part["text"].is_string()) {
        text += part["text"].get<std::string>();
      }
    }
  }
  return text;
}

std::string OllamaReasoningOf(const json& message) {
  for (const char* key : {"reasoning_content", "reasoning"}) {
    if (message.contains(key) && message[key].is_string()) return message[key].get<std::string>();
  }
  return "";
}

// The generated part of a line: {"message": {...}} for chat, {"response", "thinking"} for
// generate.
void PutOllamaText(OllamaApi api, const std::string& text, const std::string& thinking,
                   const json& tool_calls, json& out) {
  if (api == OllamaApi::kGenerate) {
    out["response"] = text;
    if (!thinking.empty()) out["thinking"] = thinking;
    return;
  }
  json message = {{"role", "assistant"}, {"content", text}};
  if (!thinking.empty()) message["thinking"] = thinking;
  if (!tool_calls.is_null() && !tool_calls.empty()) message["tool_calls"] = tool_calls;
  out["message"] = std::move(message);
}

}  // namespace

void AddOllamaCounts(const json& usage, const json& timings, const OllamaClock& clock,
                     Clock::time_point first_token, json& out) {
  const Clock::time_point now = Clock::now();
  const int64_t total = OllamaNanos(now - clock.arrived);
  const int64_t load = std::min<int64_t>(clock.load.count(), total);
  out["total_duration"] = total;
  out["load_duration"] = load;
  out["prompt_eval_count"] = static_cast<int64_t>(
      OllamaNumber(usage, "prompt_tokens", OllamaNumber(timings, "prompt_n", 0)));
  out["eval_count"] = static_cast<int64_t>(
      OllamaNumber(usage, "completion_tokens", OllamaNumber(timings, "predicted_n", 0)));
  if (timings.is_object() && timings.contains("prompt_ms")) {
    out["prompt_eval_duration"] = static_cast<int64_t>(OllamaNumber(timings, "prompt_ms", 0) * 1e6);
    out["eval_duration"] = static_cast<int64_t>(OllamaNumber(timings, "predicted_ms", 0) * 1e6);
    return;
  }
  // No timings: the prompt took until the first token, the rest was generation.
  const int64_t after_load = total - load;
  const int64_t prompt =
      first_token == Clock::time_point{}
          ? 0
          : std::clamp<int64_t>(OllamaNanos(first_token - clock.arrived) - load, 0, after_load);
  out["prompt_eval_duration"] = prompt;
  out["eval_duration"] = after_load - prompt;
}

std::string OllamaDoneReason(const json& finish_reason) {
  return finish_reason == "length" ? "length" : "stop";
}

json OllamaToolCalls(const json& tool_calls) {
  json out = json::array();
  if (!tool_calls.is_array()) return out;
  for (const json& call : tool_calls) {
    if (!call.is_object() || !call.contains("function") || !call["function"].is_object()) continue;
    const json& function = call["function"];
    json arguments = json::object();
    if (function.contains("arguments")) {
      const json& given = function["arguments"];
      if (given.is_string()) {
        const std::string text = given.get<std::string>();
        arguments = text.empty() ? json::object() : json::parse(text, nullptr, false);
        if (arguments.is_discarded()) arguments = text;
      } else {
        arguments = given;
      }
    }
    json name = function.contains("name") ? function["name"] : json("");
    out.push_back({{"function", {{"name", name}, {"arguments", arguments}}}});
  }
  return out;
}

json OllamaAnswerOf(const json& given, const std::string& model, OllamaApi api,
                    const OllamaClock& clock) {
  const json completion = given.is_object() ? given : json::object();
  json out = OllamaHead(model);
  json choice = json::object();
  if (completion.contains("choices") && completion["choices"].is_array() &&
      !completion["choices"].empty() && completion["choices"][0].is_object()) {
    choice = completion["choices"][0];
  }
  // A chat answer's message, or a completion's (a raw generate's) text.
  const json message = choice.contains("message") && choice["message"].is_object()
                           ? choice["message"]
                           : json{{"content", choice.value("text", json())}};
  PutOllamaText(api, OllamaTextOf(message.value("content", json())), OllamaReasoningOf(message),
                OllamaToolCalls(message.value("tool_calls", json())), out);
  out["done"] = true;
  out["done_reason"] = OllamaDoneReason(choice.value("finish_reason", json()));
  AddOllamaCounts(completion.value("usage", json()), completion.value("timings", json()), clock, {},
                  out);
  return out;
}

json OllamaEmbeddingsOf(const json& given, const std::string& model, bool legacy,
                        const OllamaClock& clock) {
  const json answer = given.is_object() ? given : json::object();
  json embeddings = json::array();
  if (answer.contains("data") && answer["data"].is_array()) {
    for (const json& item : answer["data"]) {
      if (item.is_object() && item.contains("embedding")) embeddings.push_back(item["embedding"]);
    }
  }
  if (legacy) {
    return {{"embedding", embeddings.empty() ? json::array() : embeddings[0]}};
  }
  const int64_t total = OllamaNanos(Clock::now() - clock.arrived);
  return {{"model", model},
          {"embeddings", std::move(embeddings)},
          {"total_duration", total},
          {"load_duration", std::min<int64_t>(clock.load.count(), total)},
          {"prompt_eval_count",
           static_cast<int64_t>(OllamaNumber(answer.value("usage", json()), "prompt_tokens", 0))}};
}

std::string OllamaErrorMessage(std::string_view body) {
  const json parsed = json::parse(body, nullptr, false);
  if (parsed.is_object() && parsed.contains("error")) {
    const json& error = parsed["error"];
    if (error.is_string()) return error.get<std::string>();
    if (error.is_object() && error.contains("message") && error["message"].is_string()) {
      return error["message"].get<std::string>();
    }
  }
  if (body.empty()) return "the backend answered with an error and no message";
  return std::string(body.substr(0, 2000));
}

OllamaStream::OllamaStream(std::string model, OllamaApi api, OllamaClock clock)
    : model_(std::move(model)), api_(api), clock_(clock) {}

std::string OllamaStream::Feed(std::string_view sse) {
  pending_.append(sse);
  std::string lines;
  size_t start = 0;
  for (size_t end; (end = pending_.find('\n', start)) != std::string::npos; start = end + 1) {
    std::string_view line(pending_.data() + start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.starts_with("data:")) continue;  // event names, comments, blank separators
    line.remove_prefix(5);
    if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (!done_) lines += Event(line);
  }
  pending_.erase(0, start);
  return lines;
}

std::string OllamaStream::Finish() {
  if (done_) return "";
  std::string lines;
  if (!pending_.empty()) lines = Feed("\n");
  return done_ ? lines : lines + Final();
}

std::string OllamaStream::Event(std::string_view data) {
  if (data == "[DONE]") return Final();
  const json chunk = json::parse(data, nullptr, false);
  if (!chunk.is_object()) return "";
  if (chunk.contains("error")) {
    done_ = true;
    return JsonText(json{{"error", OllamaErrorMessage(data)}}) + "\n";
  }
  if (chunk.contains("usage") && chunk["usage"].is_object()) usage_ = chunk["usage"];
  if (chunk.contains("timings") && chunk["timings"].is_object()) timings_ = chunk["timings"];
  if (!chunk.contains("choices") || !chunk["choices"].is_array() || chunk["choices"].empty()) {
    return "";
  }
  const json& choice = chunk["choices"][0];
  if (!choice.is_object()) return "";
  if (choice.contains("finish_reason") && !choice["finish_reason"].is_null()) {
    finish_reason_ = choice["finish_reason"];
  }
  // A chat chunk's delta, or a completion chunk's (a raw generate's) text.
  const bool chat = choice.contains("delta") && choice["delta"].is_object();
  const json text_only = chat ? json() : json{{"content", choice.value("text", json())}};
  const json& delta = chat ? choice["delta"] : text_only;
  if (delta.contains("tool_calls") && delta["tool_calls"].is_array()) {
    for (const json& part : delta["tool_calls"]) {
      if (!part.is_object()) continue;
      const int index = part.contains("index") && part["index"].is_number_integer()
                            ? part["index"].get<int>()
                            : static_cast<int>(tool_calls_.size());
      json& call = tool_calls_[index];
      if (call.is_null()) call = {{"function", {{"name", ""}, {"arguments", ""}}}};
      if (!part.contains("function") || !part["function"].is_object()) continue;
      const json& function = part["function"];
      for (const char* key : {"name", "arguments"}) {
        if (function.contains(key) && function[key].is_string()) {
          call["function"][key] =
              call["function"][key].get<std::string>() + function[key].get<std::string>();
        }
      }
    }
  }
  const std::string text = OllamaTextOf(delta.value("content", json()));
  const std::string thinking = OllamaReasoningOf(delta);
  if (text.empty() && thinking.empty()) return "";
  if (first_token_ == Clock::time_point{}) first_token_ = Clock::now();
  json line = OllamaHead(model_);
  PutOllamaText(api_, text, thinking, json(), line);
  line["done"] = false;
  return JsonText(line) + "\n";
}

std::string OllamaStream::Final() {
  done_ = true;
  std::string lines;
  if (!tool_calls_.empty()) {
    json calls = json::array();
    for (auto& [index, call] : tool_calls_) calls.push_back(call);
    json line = OllamaHead(model_);
    PutOllamaText(api_, "", "", OllamaToolCalls(calls), line);
    line["done"] = false;
    lines += JsonText(line) + "\n";
  }
  json last = OllamaHead(model_);
  PutOllamaText(api_, "", "", json(), last);
  last["done"] = true;
  last["done_reason"] = OllamaDoneReason(finish_reason_);
  AddOllamaCounts(usage_, timings_, clock_, first_token_, last);
  return lines + JsonText(last) + "\n";
}

}  // namespace swapd
