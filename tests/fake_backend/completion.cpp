#include "tests/fake_backend/completion.h"

#include <algorithm>

namespace fake_backend {
namespace {

using nlohmann::json;

constexpr const char* kFingerprint = "b0000-fake";
constexpr int kMaxTokens = 1000000;

// Appends the text of a message's content: a string, or an array of {"type":"text","text":...}.
void AppendContent(const json& content, std::string* out) {
  if (content.is_string()) {
    *out += content.get<std::string>() + "\n";
  } else if (content.is_array()) {
    for (const json& part : content) {
      if (part.is_object() && part.contains("text") && part["text"].is_string()) {
        *out += part["text"].get<std::string>() + "\n";
      }
    }
  }
}

// A prompt is a string, or an array of strings and token ids (each id counts as one word).
void AppendPrompt(const json& prompt, std::string* out) {
  if (prompt.is_string()) {
    *out += prompt.get<std::string>() + "\n";
  } else if (prompt.is_number()) {
    *out += prompt.dump() + " ";
  } else if (prompt.is_array()) {
    for (const json& item : prompt) AppendPrompt(item, out);
  }
}

bool ReadPrompt(const json& body, CompletionApi api, std::string* prompt, std::string* error) {
  if (api == CompletionApi::kChat) {
    if (!body.contains("messages") || !body["messages"].is_array()) {
      *error = "'messages' is required and must be an array";
      return false;
    }
    for (const json& message : body["messages"]) {
      if (!message.is_object()) {
        *error = "each message must be an object";
        return false;
      }
      if (message.contains("content")) AppendContent(message["content"], prompt);
    }
    return true;
  }
  if (!body.contains("prompt")) {
    *error = "\"prompt\" must be provided";
    return false;
  }
  AppendPrompt(body["prompt"], prompt);
  return true;
}

json Usage(const CompletionJob& job) {
  const int completion = static_cast<int>(job.tokens.size());
  const int prompt = job.timings.prompt_n + job.timings.cache_n;
  return {{"completion_tokens", completion},
          {"prompt_tokens", prompt},
          {"total_tokens", completion + prompt}};
}

std::string FinishReason(const CompletionJob& job) { return job.limit_reached ? "length" : "stop"; }

// Fields every OpenAI-shaped chunk and response carries.
json Envelope(const CompletionJob& job, const char* object) {
  return {{"created", job.created},
          {"id", job.id},
          {"model", job.model},
          {"system_fingerprint", kFingerprint},
          {"object", object}};
}

json NativeFinal(const CompletionJob& job, const std::string& content) {
  const int n = static_cast<int>(job.tokens.size());
  return {{"index", 0},
          {"content", content},
          {"tokens", json::array()},
          {"id_slot", 0},
          {"stop", true},
          {"model", job.model},
          {"tokens_predicted", n},
          {"tokens_evaluated", job.timings.prompt_n},
          {"generation_settings", {{"n_predict", n}}},
          {"prompt", job.prompt},
          {"has_new_line", false},
          {"truncated", false},
          {"stop_type", job.limit_reached ? "limit" : "eos"},
          {"stopping_word", ""},
          {"tokens_cached", job.timings.prompt_n + n},
          {"timings", job.timings.ToJson()}};
}

}  // namespace

bool ParseCompletionJob(const json& body, CompletionApi api, const Options& options,
                        CompletionJob* job, std::string* error) {
  if (!body.is_object()) {
    *error = "the request body must be a JSON object";
    return false;
  }
  job->api = api;
  job->id = NextId(api == CompletionApi::kChat ? "chatcmpl-" : "cmpl-");
  job->created = std::time(nullptr);
  job->model = options.ModelId();
  if (body.contains("model") && body["model"].is_string() &&
      !body["model"].get<std::string>().empty()) {
    job->model = body["model"].get<std::string>();
  }
  if (!ReadPrompt(body, api, &job->prompt, error)) return false;

  int n_predict = options.default_n_predict >= 0 ? options.default_n_predict : 16;
  for (const char* key : {"max_completion_tokens", "max_tokens", "n_predict"}) {
    if (body.contains(key) && body[key].is_number_integer() && body[key].get<long long>() >= 0) {
      n_predict = static_cast<int>(std::min<long long>(body[key].get<long long>(), kMaxTokens));
      job->limit_reached = true;
      break;
    }
  }
  job->stream =
      body.contains("stream") && body["stream"].is_boolean() && body["stream"].get<bool>();
  if (body.contains("stream_options") && body["stream_options"].is_object()) {
    const json& so = body["stream_options"];
    job->include_usage = so.contains("include_usage") && so["include_usage"].is_boolean() &&
                         so["include_usage"].get<bool>();
  }
  job->tokens = GenerateTokens(job->prompt, n_predict);
  if (!options.reply.empty()) {
    job->tokens = ReplyTokens(options.reply);
    job->limit_reached = job->tokens.size() > static_cast<size_t>(n_predict);
    if (job->limit_reached) job->tokens.resize(n_predict);
  } else if (AsksForJson(job->prompt)) {
    // The whole document, unless max_tokens cuts it short (then it is invalid, as a real
    // model's would be).
    job->tokens = JsonReplyTokens(job->prompt, options.bad_json);
    job->limit_reached = job->tokens.size() > static_cast<size_t>(n_predict);
    if (job->limit_reached) job->tokens.resize(n_predict);
  }
  job->timings = MakeTimings(CountWords(job->prompt), static_cast<int>(job->tokens.size()),
                             options.tokens_per_second);
  return true;
}

std::string GeneratedText(const CompletionJob& job) {
  std::string text;
  for (const std::string& token : job.tokens) text += token;
  return text;
}

json CompletionResponse(const CompletionJob& job) {
  const std::string text = GeneratedText(job);
  if (job.api == CompletionApi::kNative) return NativeFinal(job, text);
  json response;
  if (job.api == CompletionApi::kChat) {
    response = Envelope(job, "chat.completion");
    response["choices"] = json::array({{{"finish_reason", FinishReason(job)},
                                        {"index", 0},
                                        {"message", {{"role", "assistant"}, {"content", text}}}}});
  } else {
    response = Envelope(job, "text_completion");
    response["choices"] = json::array({{{"text", text},
                                        {"index", 0},
                                        {"logprobs", nullptr},
                                        {"finish_reason", FinishReason(job)}}});
  }
  response["usage"] = Usage(job);
  response["timings"] = job.timings.ToJson();
  return response;
}

std::vector<json> OpeningEvents(const CompletionJob& job) {
  if (job.api != CompletionApi::kChat) return {};
  json chunk = Envelope(job, "chat.completion.chunk");
  chunk["choices"] = json::array({{{"finish_reason", nullptr},
                                   {"index", 0},
                                   {"delta", {{"role", "assistant"}, {"content", nullptr}}}}});
  return {chunk};
}

json TokenEvent(const CompletionJob& job, size_t index) {
  const std::string& token = job.tokens.at(index);
  switch (job.api) {
    case CompletionApi::kChat: {
      json chunk = Envelope(job, "chat.completion.chunk");
      chunk["choices"] = json::array(
          {{{"finish_reason", nullptr}, {"index", 0}, {"delta", {{"content", token}}}}});
      return chunk;
    }
    case CompletionApi::kText: {
      json chunk = Envelope(job, "text_completion");
      chunk["choices"] = json::array(
          {{{"text", token}, {"index", 0}, {"logprobs", nullptr}, {"finish_reason", nullptr}}});
      return chunk;
    }
    case CompletionApi::kNative:
      break;
  }
  return {{"index", 0},
          {"content", token},
          {"tokens", json::array()},
          {"stop", false},
          {"id_slot", -1},
          {"tokens_predicted", index + 1},
          {"tokens_evaluated", job.timings.prompt_n}};
}

std::vector<json> ClosingEvents(const CompletionJob& job) {
  if (job.api == CompletionApi::kNative) return {NativeFinal(job, "")};
  std::vector<json> events;
  const char* object =
      job.api == CompletionApi::kChat ? "chat.completion.chunk" : "text_completion";
  json finish = Envelope(job, object);
  if (job.api == CompletionApi::kChat) {
    finish["choices"] = json::array(
        {{{"finish_reason", FinishReason(job)}, {"index", 0}, {"delta", json::object()}}});
  } else {
    finish["choices"] = json::array({{{"text", ""},
                                      {"index", 0},
                                      {"logprobs", nullptr},
                                      {"finish_reason", FinishReason(job)}}});
  }
  events.push_back(finish);
  if (job.include_usage) {
    // OpenAI sends usage in an extra chunk whose `choices` is empty; llama-server does the same.
    json usage = Envelope(job, object);
    usage["choices"] = json::array();
    usage["usage"] = Usage(job);
    events.push_back(usage);
  }
  // llama-server puts `timings` on the last chunk.
  events.back()["timings"] = job.timings.ToJson();
  return events;
}

bool SendsDone(const CompletionJob& job) { return job.api != CompletionApi::kNative; }

}  // namespace fake_backend
