#include "tests/fake_backend/completion.h"

#include <algorithm>
#include <sstream>

namespace fake_backend {
namespace {

using nlohmann::json;

constexpr const char* kFingerprint = "b0000-fake";
constexpr int kMaxTokens = 1000000;

// Appends the text of a message's content: a string, or an array of {"type":"text","text":...}.
void AppendContent(const json& content, std::string* out, std::vector<std::string>* images) {
  if (content.is_string()) {
    *out += content.get<std::string>() + "\n";
  } else if (content.is_array()) {
    for (const json& part : content) {
      if (part.is_object() && part.contains("text") && part["text"].is_string()) {
        *out += part["text"].get<std::string>() + "\n";
      }
      // {"type":"image_url","image_url":{"url":"data:image/png;base64,..."}}: its media type.
      if (part.is_object() && part.value("type", json()) == "image_url" &&
          part.contains("image_url") && part["image_url"].is_object() &&
          part["image_url"].value("url", json()).is_string()) {
        const std::string url = part["image_url"]["url"].get<std::string>();
        const size_t end = url.find(';');
        images->push_back(url.starts_with("data:") && end != std::string::npos
                              ? url.substr(5, end - 5)
                              : "image");
      }
    }
  }
}

// The tool call a chat request with tools gets (CompletionJob::tool_call), or null.
json ToolCallFor(const json& body, const std::string& prompt) {
  if (!body.contains("tools") || !body["tools"].is_array() || body["tools"].empty()) return {};
  const json& messages = body["messages"];
  if (!messages.empty() && messages.back().is_object() &&
      messages.back().value("role", json()) == "tool") {
    return {};
  }
  const json& tool = body["tools"][0];
  if (!tool.is_object() || !tool.contains("function") || !tool["function"].is_object() ||
      !tool["function"].value("name", json()).is_string()) {
    return {};
  }
  std::string first;
  std::istringstream(prompt) >> first;
  const json arguments = {{"text", first}};
  return {{"name", tool["function"]["name"]}, {"arguments", arguments.dump()}};
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

bool ReadPrompt(const json& body, CompletionApi api, std::string* prompt,
                std::vector<std::string>* images, std::string* error) {
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
      if (message.contains("content")) AppendContent(message["content"], prompt, images);
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

std::string FinishReason(const CompletionJob& job) {
  if (!job.tool_call.is_null()) return "tool_calls";
  return job.limit_reached ? "length" : "stop";
}

json ToolCallsOf(const CompletionJob& job, const std::string& arguments) {
  return json::array({{{"index", 0},
                       {"id", "call_fake_0"},
                       {"type", "function"},
                       {"function", {{"name", job.tool_call["name"]}, {"arguments", arguments}}}}});
}

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
  if (!ReadPrompt(body, api, &job->prompt, &job->image_types, error)) return false;

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
  if (api == CompletionApi::kChat) {
    job->tool_call = ToolCallFor(body, job->prompt);
    if (!job->tool_call.is_null()) job->tokens.clear();
    for (size_t i = job->image_types.size(); i-- > 0;) {
      job->tokens.insert(job->tokens.begin(), job->image_types[i] + " ");
    }
    const json& kwargs =
        body.contains("chat_template_kwargs") ? body["chat_template_kwargs"] : json::object();
    if (kwargs.is_object() && kwargs.value("enable_thinking", json()) == true) {
      job->reasoning = "thinking about it";
    }
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
    json& message = response["choices"][0]["message"];
    if (!job.reasoning.empty()) message["reasoning_content"] = job.reasoning;
    if (!job.tool_call.is_null()) {
      message["content"] = nullptr;
      message["tool_calls"] = ToolCallsOf(job, job.tool_call["arguments"].get<std::string>());
    }
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
  std::vector<json> events = {chunk};
  if (!job.reasoning.empty()) {
    chunk["choices"][0]["delta"] = {{"reasoning_content", job.reasoning}};
    events.push_back(chunk);
  }
  if (!job.tool_call.is_null()) {
    // The call's arguments in two pieces, as servers stream them.
    const std::string arguments = job.tool_call["arguments"].get<std::string>();
    const size_t half = arguments.size() / 2;
    chunk["choices"][0]["delta"] = {{"tool_calls", ToolCallsOf(job, arguments.substr(0, half))}};
    events.push_back(chunk);
    json rest = {{{"index", 0}, {"function", {{"arguments", arguments.substr(half)}}}}};
    chunk["choices"][0]["delta"] = {{"tool_calls", rest}};
    events.push_back(chunk);
  }
  return events;
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
