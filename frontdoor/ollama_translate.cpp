#include "frontdoor/ollama_translate.h"

#include <cmath>
#include <cstdlib>
#include <map>

#include "base/go_duration.h"

namespace swapd {
namespace {

using nlohmann::json;

Status OllamaBadRequest(std::string message) {
  return Status::Error(ErrorCode::kInvalidArgument, std::move(message));
}

// `object[key]` when it is a string, else "" (never throws).
std::string OllamaStringField(const json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_string()) return "";
  return object[key].get<std::string>();
}

KeepAlive OllamaKeepAliveOf(double seconds) {
  if (seconds < 0) return {KeepAlive::Kind::kForever, {}};
  if (seconds == 0) return {KeepAlive::Kind::kUnload, {}};
  return {KeepAlive::Kind::kFor, std::chrono::seconds(static_cast<int64_t>(std::ceil(seconds)))};
}

// Ollama's options that OpenAI servers read under another name or the same one.
void MapOllamaOptions(const json& options, json& out) {
  static const std::map<std::string, std::string> kRenamed = {{"num_predict", "max_tokens"},
                                                              {"num_keep", "n_keep"}};
  // Read by llama-server (top_k, min_p, repeat_penalty, ... also by vLLM's extra parameters).
  static const char* const kSame[] = {"temperature",
                                      "top_p",
                                      "top_k",
                                      "seed",
                                      "stop",
                                      "min_p",
                                      "typical_p",
                                      "repeat_last_n",
                                      "repeat_penalty",
                                      "presence_penalty",
                                      "frequency_penalty",
                                      "mirostat",
                                      "mirostat_tau",
                                      "mirostat_eta"};
  for (const char* key : kSame) {
    if (options.contains(key) && !options[key].is_null()) out[key] = options[key];
  }
  for (const auto& [from, to] : kRenamed) {
    if (!options.contains(from) || !options[from].is_number()) continue;
    // num_predict -1 (infinite) and -2 (fill the context): the server's default.
    if (from == "num_predict" && options[from].get<double>() < 0) continue;
    out[to] = options[from];
  }
  // vLLM's name for repeat_penalty.
  if (options.contains("repeat_penalty") && options["repeat_penalty"].is_number()) {
    out["repetition_penalty"] = options["repeat_penalty"];
  }
}

// The fields /api/chat and /api/generate share: model, stream, keep_alive, options, format,
// tools, think.
Result<OllamaRequest> OllamaCommonFields(const json& body) {
  if (!body.is_object()) return OllamaBadRequest("the request body must be a JSON object");
  OllamaRequest request;
  if (!body.contains("model") || !body["model"].is_string() ||
      body["model"].get<std::string>().empty()) {
    return OllamaBadRequest("model is required");
  }
  request.model = body["model"].get<std::string>();
  if (body.contains("stream") && !body["stream"].is_null()) {
    if (!body["stream"].is_boolean()) return OllamaBadRequest("stream must be a boolean");
    request.stream = body["stream"].get<bool>();
  }
  Result<KeepAlive> keep_alive =
      ParseKeepAlive(body.contains("keep_alive") ? body["keep_alive"] : json());
  if (!keep_alive.ok()) return keep_alive.status();
  request.keep_alive = keep_alive.value();
  json& out = request.openai;
  out = json::object();
  out["model"] = request.model;
  out["stream"] = request.stream;
  if (request.stream) out["stream_options"] = {{"include_usage", true}};
  if (body.contains("options") && !body["options"].is_null()) {
    if (!body["options"].is_object()) return OllamaBadRequest("options must be an object");
    MapOllamaOptions(body["options"], out);
  }
  if (body.contains("format") && !body["format"].is_null()) {
    const json& format = body["format"];
    if (format == "json") {
      out["response_format"] = {{"type", "json_object"}};
    } else if (format.is_object()) {
      out["response_format"] = {{"type", "json_schema"},
                                {"json_schema", {{"name", "schema"}, {"schema", format}}}};
    } else if (format != "") {
      return OllamaBadRequest("format must be \"json\" or a JSON schema object");
    }
  }
  if (body.contains("tools") && !body["tools"].is_null()) {
    if (!body["tools"].is_array()) return OllamaBadRequest("tools must be an array");
    if (!body["tools"].empty()) out["tools"] = body["tools"];
  }
  if (body.contains("think") && !body["think"].is_null()) {
    const json& think = body["think"];
    if (think.is_boolean()) {
      // llama-server's and vLLM's switch of a thinking model's chat template.
      out["chat_template_kwargs"] = {{"enable_thinking", think.get<bool>()}};
    } else if (think.is_string()) {
      out["reasoning_effort"] = think;  // "low", "medium", "high"
    } else {
      return OllamaBadRequest("think must be a boolean or \"low\", \"medium\", \"high\"");
    }
  }
  return request;
}

// A message's `images` (base64 strings) as OpenAI content parts after its text.
Result<json> ContentWithImages(const std::string& text, const json& images) {
  if (!images.is_array()) return OllamaBadRequest("images must be an array of base64 strings");
  json parts = json::array();
  if (!text.empty()) parts.push_back({{"type", "text"}, {"text", text}});
  for (const json& image : images) {
    if (!image.is_string()) return OllamaBadRequest("images must be an array of base64 strings");
    parts.push_back(
        {{"type", "image_url"}, {"image_url", {{"url", ImageDataUrl(image.get<std::string>())}}}});
  }
  return parts;
}

// One Ollama message as OpenAI's. `calls` maps a tool's name to the id of its latest call, so
// that a tool's result names the call it answers.
Result<json> MessageFromOllama(const json& message, size_t index,
                               std::map<std::string, std::string>& calls) {
  if (!message.is_object()) return OllamaBadRequest("each message must be an object");
  if (!message.contains("role") || !message["role"].is_string()) {
    return OllamaBadRequest("each message needs a role (a string)");
  }
  const std::string role = message["role"].get<std::string>();
  json out = {{"role", role}};
  std::string text;
  if (message.contains("content") && !message["content"].is_null()) {
    if (!message["content"].is_string()) return OllamaBadRequest("content must be a string");
    text = message["content"].get<std::string>();
  }
  out["content"] = text;
  if (message.contains("images") && !message["images"].is_null() && !message["images"].empty()) {
    Result<json> parts = ContentWithImages(text, message["images"]);
    if (!parts.ok()) return parts.status();
    out["content"] = std::move(parts).value();
  }
  if (message.contains("tool_calls") && !message["tool_calls"].is_null()) {
    if (!message["tool_calls"].is_array()) return OllamaBadRequest("tool_calls must be an array");
    json tool_calls = json::array();
    for (const json& call : message["tool_calls"]) {
      if (!call.is_object() || !call.contains("function") || !call["function"].is_object()) {
        return OllamaBadRequest("each tool call needs a function");
      }
      const json& function = call["function"];
      const std::string name = OllamaStringField(function, "name");
      const json arguments =
          function.contains("arguments") ? function["arguments"] : json::object();
      const std::string id =
          "call_" + std::to_string(index) + "_" + std::to_string(tool_calls.size());
      calls[name] = id;
      tool_calls.push_back({{"id", id},
                            {"type", "function"},
                            {"function",
                             {{"name", name},
                              {"arguments", arguments.is_string() ? arguments.get<std::string>()
                                                                  : arguments.dump()}}}});
    }
    if (!tool_calls.empty()) out["tool_calls"] = std::move(tool_calls);
  }
  if (role == "tool") {
    const std::string name = OllamaStringField(message, "tool_name").empty()
                                 ? OllamaStringField(message, "name")
                                 : OllamaStringField(message, "tool_name");
    auto call = calls.find(name);
    out["tool_call_id"] = call != calls.end() ? call->second : name;
    if (!name.empty()) out["name"] = name;
  }
  return out;
}

}  // namespace

Result<KeepAlive> ParseKeepAlive(const json& value) {
  if (value.is_null()) return KeepAlive{};
  if (value.is_number()) return OllamaKeepAliveOf(value.get<double>());
  if (value.is_string()) {
    std::optional<double> seconds = ParseGoDuration(value.get<std::string>());
    if (seconds) return OllamaKeepAliveOf(*seconds);
  }
  return OllamaBadRequest("keep_alive must be a number of seconds or a duration such as \"5m\"");
}

Result<OllamaRequest> ChatRequestFromOllama(const json& body) {
  Result<OllamaRequest> request = OllamaCommonFields(body);
  if (!request.ok()) return request;
  if (!body.contains("messages") || body["messages"].is_null()) {
    return OllamaBadRequest("messages is required");
  }
  if (!body["messages"].is_array()) return OllamaBadRequest("messages must be an array");
  json messages = json::array();
  std::map<std::string, std::string> calls;
  for (const json& message : body["messages"]) {
    Result<json> mapped = MessageFromOllama(message, messages.size(), calls);
    if (!mapped.ok()) return mapped.status();
    messages.push_back(std::move(mapped).value());
  }
  request.value().load_only = messages.empty();
  request.value().openai["messages"] = std::move(messages);
  return request;
}

Result<OllamaRequest> GenerateRequestFromOllama(const json& body) {
  Result<OllamaRequest> request = OllamaCommonFields(body);
  if (!request.ok()) return request;
  if (body.contains("raw") && !body["raw"].is_null() && !body["raw"].is_boolean()) {
    return OllamaBadRequest("raw must be a boolean");
  }
  if (body.contains("suffix") && body["suffix"].is_string() && body["suffix"] != "") {
    return OllamaBadRequest(
        "suffix is not supported: use raw with the model's fill-in-the-middle tokens, or "
        "llama-server's /infill");
  }
  for (const char* key : {"prompt", "system"}) {
    if (body.contains(key) && !body[key].is_null() && !body[key].is_string()) {
      return OllamaBadRequest(std::string(key) + " must be a string");
    }
  }
  const std::string prompt = OllamaStringField(body, "prompt");
  const bool has_images =
      body.contains("images") && body["images"].is_array() && !body["images"].empty();
  if (body.value("raw", false)) {
    // The prompt as it is, templated by the client (an editor's fill-in-the-middle prompt):
    // the completions route, where no chat template applies.
    if (has_images) return OllamaBadRequest("images cannot be sent with raw");
    request.value().route = "/v1/completions";
    request.value().load_only = prompt.empty();
    request.value().openai["prompt"] = prompt;
    return request;
  }
  json messages = json::array();
  if (body.contains("system") && body["system"].is_string() && body["system"] != "") {
    messages.push_back({{"role", "system"}, {"content", body["system"]}});
  }
  json user = {{"role", "user"}, {"content", prompt}};
  request.value().load_only = prompt.empty() && !has_images;
  if (body.contains("images") && !body["images"].is_null() && !body["images"].empty()) {
    Result<json> parts = ContentWithImages(prompt, body["images"]);
    if (!parts.ok()) return parts.status();
    user["content"] = std::move(parts).value();
  }
  messages.push_back(std::move(user));
  request.value().openai["messages"] = std::move(messages);
  return request;
}

Result<OllamaRequest> EmbedRequestFromOllama(const json& body, bool legacy) {
  if (!body.is_object()) return OllamaBadRequest("the request body must be a JSON object");
  if (!body.contains("model") || !body["model"].is_string() || body["model"] == "") {
    return OllamaBadRequest("model is required");
  }
  OllamaRequest request;
  request.model = body["model"].get<std::string>();
  request.stream = false;
  Result<KeepAlive> keep_alive =
      ParseKeepAlive(body.contains("keep_alive") ? body["keep_alive"] : json());
  if (!keep_alive.ok()) return keep_alive.status();
  request.keep_alive = keep_alive.value();
  const char* key = legacy ? "prompt" : "input";
  if (!body.contains(key)) return OllamaBadRequest(std::string(key) + " is required");
  const json& input = body[key];
  bool valid = input.is_string();
  if (!legacy && input.is_array()) {
    valid = !input.empty();
    for (const json& item : input) valid = valid && item.is_string();
  }
  if (!valid) {
    return OllamaBadRequest(legacy ? "prompt must be a string"
                                   : "input must be a string or a non-empty array of strings");
  }
  request.route = "/v1/embeddings";
  request.openai = {{"model", request.model}, {"input", input}};
  if (body.contains("dimensions") && body["dimensions"].is_number_integer()) {
    request.openai["dimensions"] = body["dimensions"];
  }
  return request;
}

std::string ImageDataUrl(const std::string& base64) {
  if (base64.starts_with("data:")) return base64;
  std::string_view type = "image/png";
  if (base64.starts_with("/9j/")) {
    type = "image/jpeg";
  } else if (base64.starts_with("R0lGOD")) {
    type = "image/gif";
  } else if (base64.starts_with("UklGR")) {
    type = "image/webp";
  }
  return "data:" + std::string(type) + ";base64," + base64;
}

}  // namespace swapd
