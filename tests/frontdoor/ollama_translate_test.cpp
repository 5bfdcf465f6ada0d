// Ollama's API translated to OpenAI's and back, on JSON alone: requests (options, format, images,
// tools, think, keep_alive), answers (whole, streamed, tool calls, usage and timings to counts and
// durations), errors and the model listings.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "config/config.h"
#include "frontdoor/ollama_answer.h"
#include "frontdoor/ollama_models.h"
#include "frontdoor/ollama_translate.h"
#include "tests/support/temp_dir.h"

namespace swapd {
namespace {

using nlohmann::json;

// Splits NDJSON into its documents.
std::vector<json> NdjsonLines(const std::string& text) {
  std::vector<json> lines;
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(json::parse(text.substr(start, end - start)));
  }
  REQUIRE(start == text.size());  // every line ends with '\n'
  return lines;
}

TEST_CASE("Ollama keep_alive: numbers and Go durations", "[unit][ollama]") {
  using Kind = KeepAlive::Kind;
  CHECK(ParseKeepAlive(json()).value().kind == Kind::kDefault);
  for (const json& zero : {json(0), json("0"), json("0s"), json(0.0)}) {
    CHECK(ParseKeepAlive(zero).value().kind == Kind::kUnload);
  }
  CHECK(ParseKeepAlive(json(-1)).value().kind == Kind::kForever);
  CHECK(ParseKeepAlive(json("-1m")).value().kind == Kind::kForever);
  KeepAlive five = ParseKeepAlive(json("5m")).value();
  CHECK(five.kind == Kind::kFor);
  CHECK(five.duration == std::chrono::seconds(300));
  CHECK(ParseKeepAlive(json("1h30m")).value().duration == std::chrono::seconds(5400));
  CHECK(ParseKeepAlive(json(90)).value().duration == std::chrono::seconds(90));
  CHECK(ParseKeepAlive(json("300ms")).value().duration == std::chrono::seconds(1));
  CHECK_FALSE(ParseKeepAlive(json("soon")).ok());
  CHECK_FALSE(ParseKeepAlive(json("5x")).ok());
  CHECK_FALSE(ParseKeepAlive(json::array()).ok());
}

TEST_CASE("Ollama chat request: messages, options, format, tools, think", "[unit][ollama]") {
  const json body = json::parse(R"({
    "model": "qwen3:4b", "keep_alive": "0s",
    "messages": [
      {"role": "system", "content": "be brief"},
      {"role": "user", "content": "what is it", "images": ["iVBORw0KGgo=", "/9j/4AAQ"]},
      {"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "weather", "arguments": {"city": "Paris"}}}]},
      {"role": "tool", "tool_name": "weather", "content": "sunny"}],
    "options": {"temperature": 0.2, "top_p": 0.9, "top_k": 40, "seed": 7, "stop": ["\n"],
                "num_predict": 64, "repeat_penalty": 1.1, "presence_penalty": 0.5,
                "frequency_penalty": 0.25, "num_ctx": 8192},
    "format": "json",
    "tools": [{"type": "function", "function": {"name": "weather"}}],
    "think": true})");
  Result<OllamaRequest> request = ChatRequestFromOllama(body);
  REQUIRE(request.ok());
  const OllamaRequest& r = request.value();
  CHECK(r.model == "qwen3:4b");
  CHECK(r.stream);  // Ollama's default
  CHECK(r.keep_alive.kind == KeepAlive::Kind::kUnload);
  CHECK_FALSE(r.load_only);
  CHECK(ChatRequestFromOllama({{"model", "m"}, {"messages", json::array()}}).value().load_only);
  CHECK(GenerateRequestFromOllama({{"model", "m"}}).value().load_only);
  CHECK_FALSE(GenerateRequestFromOllama({{"model", "m"}, {"prompt", "x"}}).value().load_only);
  const json& o = r.openai;
  CHECK(o["model"] == "qwen3:4b");
  CHECK(o["stream"] == true);
  CHECK(o["stream_options"] == json{{"include_usage", true}});
  CHECK(o["temperature"] == 0.2);
  CHECK(o["top_p"] == 0.9);
  CHECK(o["top_k"] == 40);
  CHECK(o["seed"] == 7);
  CHECK(o["stop"] == json::array({"\n"}));
  CHECK(o["max_tokens"] == 64);
  CHECK(o["repeat_penalty"] == 1.1);
  CHECK(o["presence_penalty"] == 0.5);
  CHECK(o["frequency_penalty"] == 0.25);
  CHECK_FALSE(o.contains("num_ctx"));
  CHECK(o["response_format"] == json{{"type", "json_object"}});
  CHECK(o["tools"] == body["tools"]);
  CHECK(o["chat_template_kwargs"] == json{{"enable_thinking", true}});
  const json& m = o["messages"];
  REQUIRE(m.size() == 4);
  CHECK(m[0] == json{{"role", "system"}, {"content", "be brief"}});
  CHECK(m[1]["content"] == json::parse(R"([{"type": "text", "text": "what is it"},
          {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
          {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ"}}])"));
  const json& call = m[2]["tool_calls"][0];
  CHECK(call["type"] == "function");
  CHECK(call["function"]["name"] == "weather");
  CHECK(json::parse(call["function"]["arguments"].get<std::string>()) == json{{"city", "Paris"}});
  CHECK(m[3]["role"] == "tool");
  CHECK(m[3]["content"] == "sunny");
  CHECK(m[3]["tool_call_id"] == call["id"]);
}

TEST_CASE("Ollama format schema, think levels, stream false", "[unit][ollama]") {
  const json schema = {{"type", "object"}, {"properties", {{"a", {{"type", "string"}}}}}};
  Result<OllamaRequest> request = ChatRequestFromOllama({{"model", "m"},
                                                         {"messages", json::array()},
                                                         {"format", schema},
                                                         {"stream", false},
                                                         {"think", "high"},
                                                         {"options", {{"num_predict", -1}}}});
  REQUIRE(request.ok());
  const json& o = request.value().openai;
  CHECK_FALSE(request.value().stream);
  CHECK(o["stream"] == false);
  CHECK_FALSE(o.contains("stream_options"));
  CHECK_FALSE(o.contains("max_tokens"));  // -1: the server's default
  CHECK(o["response_format"] ==
        json{{"type", "json_schema"}, {"json_schema", {{"name", "schema"}, {"schema", schema}}}});
  CHECK(o["reasoning_effort"] == "high");
}

TEST_CASE("Ollama requests of the wrong shape are refused", "[unit][ollama]") {
  auto refused = [](const json& body) {
    Result<OllamaRequest> r = ChatRequestFromOllama(body);
    return !r.ok() && r.status().code() == ErrorCode::kInvalidArgument;
  };
  CHECK(refused(json::array()));
  CHECK(refused({{"messages", json::array()}}));  // no model
  CHECK(refused({{"model", 3}, {"messages", json::array()}}));
  CHECK(refused({{"model", "m"}}));  // no messages
  CHECK(refused({{"model", "m"}, {"messages", json::object()}}));
  CHECK(refused({{"model", "m"}, {"messages", {1}}}));
  CHECK(refused({{"model", "m"}, {"messages", {{{"content", "no role"}}}}}));
  CHECK(refused({{"model", "m"}, {"messages", {{{"role", "user"}, {"content", 5}}}}}));
  CHECK(refused({{"model", "m"}, {"messages", json::array()}, {"stream", "yes"}}));
  CHECK(refused({{"model", "m"}, {"messages", json::array()}, {"options", "hot"}}));
  CHECK(refused({{"model", "m"}, {"messages", json::array()}, {"format", "xml"}}));
  CHECK(refused({{"model", "m"}, {"messages", json::array()}, {"tools", "all"}}));
  CHECK(refused({{"model", "m"}, {"messages", json::array()}, {"keep_alive", "later"}}));
  CHECK(refused(
      {{"model", "m"}, {"messages", {{{"role", "user"}, {"content", "x"}, {"images", {1}}}}}}));
  CHECK_FALSE(GenerateRequestFromOllama({{"model", "m"}, {"prompt", "x"}, {"raw", "yes"}}).ok());
  CHECK_FALSE(GenerateRequestFromOllama({{"model", "m"}, {"prompt", "x"}, {"suffix", "y"}}).ok());
  CHECK_FALSE(
      GenerateRequestFromOllama({{"model", "m"}, {"prompt", "x"}, {"raw", true}, {"images", {"a"}}})
          .ok());
  CHECK_FALSE(GenerateRequestFromOllama({{"model", "m"}, {"prompt", 1}}).ok());
  CHECK_FALSE(EmbedRequestFromOllama({{"model", "m"}, {"input", 1}}, false).ok());
  CHECK_FALSE(EmbedRequestFromOllama({{"model", "m"}, {"input", json::array()}}, false).ok());
  CHECK_FALSE(EmbedRequestFromOllama({{"model", "m"}, {"input", "x"}}, true).ok());
}

TEST_CASE("Ollama generate: system and prompt (and images) as messages", "[unit][ollama]") {
  Result<OllamaRequest> request = GenerateRequestFromOllama(
      {{"model", "m"}, {"system", "sys"}, {"prompt", "hi"}, {"images", {"R0lGODlh"}}});
  REQUIRE(request.ok());
  const json& m = request.value().openai["messages"];
  REQUIRE(m.size() == 2);
  CHECK(m[0] == json{{"role", "system"}, {"content", "sys"}});
  CHECK(m[1]["role"] == "user");
  CHECK(m[1]["content"][1]["image_url"]["url"] == "data:image/gif;base64,R0lGODlh");
  CHECK(request.value().route == "/v1/chat/completions");

  // raw: the prompt as it is, to the completions route; system is not sent.
  Result<OllamaRequest> raw =
      GenerateRequestFromOllama({{"model", "m"},
                                 {"system", "sys"},
                                 {"raw", true},
                                 {"prompt", "<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>"},
                                 {"options", {{"num_predict", 8}}}});
  REQUIRE(raw.ok());
  CHECK(raw.value().route == "/v1/completions");
  CHECK(raw.value().openai["prompt"] == "<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>");
  CHECK(raw.value().openai["max_tokens"] == 8);
  CHECK_FALSE(raw.value().openai.contains("messages"));
  CHECK_FALSE(raw.value().load_only);

  Result<OllamaRequest> embed =
      EmbedRequestFromOllama({{"model", "e"}, {"input", {"a", "b"}}}, false);
  CHECK(embed.value().route == "/v1/embeddings");
  REQUIRE(embed.ok());
  CHECK(embed.value().openai == json{{"model", "e"}, {"input", {"a", "b"}}});
  Result<OllamaRequest> legacy = EmbedRequestFromOllama({{"model", "e"}, {"prompt", "a"}}, true);
  REQUIRE(legacy.ok());
  CHECK(legacy.value().openai == json{{"model", "e"}, {"input", "a"}});
}

TEST_CASE("Ollama answer of a whole chat completion: text, thinking, tool calls, counts",
          "[unit][ollama]") {
  const json completion = json::parse(R"({
    "choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
      "reasoning_content": "hmm", "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}}]}}],
    "usage": {"prompt_tokens": 12, "completion_tokens": 5},
    "timings": {"prompt_n": 12, "prompt_ms": 1.5, "predicted_n": 5, "predicted_ms": 20}})");
  const OllamaClock clock{std::chrono::steady_clock::now(), std::chrono::milliseconds(0)};
  const json chat = OllamaAnswerOf(completion, "qwen3", OllamaApi::kChat, clock);
  CHECK(chat["model"] == "qwen3");
  CHECK(chat["done"] == true);
  CHECK(chat["done_reason"] == "stop");
  CHECK(chat["message"]["role"] == "assistant");
  CHECK(chat["message"]["content"] == "");
  CHECK(chat["message"]["thinking"] == "hmm");
  CHECK(chat["message"]["tool_calls"] ==
        json::parse(R"([{"function": {"name": "weather", "arguments": {"city": "Paris"}}}])"));
  CHECK(chat["prompt_eval_count"] == 12);
  CHECK(chat["eval_count"] == 5);
  CHECK(chat["prompt_eval_duration"] == 1500000);
  CHECK(chat["eval_duration"] == 20000000);
  CHECK(chat["load_duration"] == 0);
  CHECK(chat["total_duration"].get<int64_t>() >= 0);
  CHECK(chat.contains("created_at"));

  const json generate = OllamaAnswerOf(
      {{"choices", {{{"finish_reason", "length"}, {"message", {{"content", "abc"}}}}}}}, "m",
      OllamaApi::kGenerate, clock);
  CHECK(generate["response"] == "abc");
  CHECK(generate["done_reason"] == "length");
  CHECK_FALSE(generate.contains("message"));
  CHECK(generate["eval_count"] == 0);  // no usage: zero, never missing
}

TEST_CASE("Ollama stream: SSE chunks become NDJSON lines, the last with the counts",
          "[unit][ollama]") {
  OllamaStream stream("m", OllamaApi::kChat,
                      {std::chrono::steady_clock::now(), std::chrono::milliseconds(3)});
  std::string out;
  // Pieces cut anywhere, even inside a line.
  const std::string sse =
      "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":null}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"think\"}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\r\n\r\n"
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":"
      "{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":"
      "{\"arguments\":\"1}\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\n"
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":2},"
      "\"timings\":{\"prompt_ms\":2,\"predicted_ms\":8}}\n\n"
      "data: [DONE]\n\n";
  for (size_t i = 0; i < sse.size(); i += 7) out += stream.Feed(std::string_view(sse).substr(i, 7));
  CHECK(stream.done());
  CHECK(stream.Finish().empty());
  const std::vector<json> lines = NdjsonLines(out);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0]["message"]["thinking"] == "think");
  CHECK(lines[0]["done"] == false);
  CHECK(lines[1]["message"]["content"] == "Hel");
  CHECK(lines[2]["message"]["tool_calls"] ==
        json::parse(R"([{"function": {"name": "f", "arguments": {"a": 1}}}])"));
  const json& last = lines[3];
  CHECK(last["done"] == true);
  CHECK(last["done_reason"] == "length");
  CHECK(last["prompt_eval_count"] == 4);
  CHECK(last["eval_count"] == 2);
  CHECK(last["prompt_eval_duration"] == 2000000);
  CHECK(last["eval_duration"] == 8000000);
  CHECK(last["load_duration"].get<int64_t>() <= 3000000);
  CHECK(last["model"] == "m");
}

TEST_CASE("Ollama stream: generate lines, an error event, a stream without [DONE]",
          "[unit][ollama]") {
  OllamaStream generate("g", OllamaApi::kGenerate, {std::chrono::steady_clock::now(), {}});
  std::string out = generate.Feed("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n");
  out += generate.Finish();  // ended without [DONE]: the last line all the same
  std::vector<json> lines = NdjsonLines(out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["response"] == "a");
  CHECK(lines[1]["done"] == true);
  CHECK(lines[1]["done_reason"] == "stop");
  CHECK(lines[1]["response"] == "");

  // A raw generate's completions: text, not a delta or a message.
  OllamaStream raw("g", OllamaApi::kGenerate, {std::chrono::steady_clock::now(), {}});
  out = raw.Feed("data: {\"choices\":[{\"text\":\"fim\"}]}\n\n");
  out += raw.Feed("data: {\"choices\":[{\"text\":\"\",\"finish_reason\":\"length\"}]}\n\n");
  out += raw.Feed("data: [DONE]\n\n");
  lines = NdjsonLines(out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["response"] == "fim");
  CHECK(lines[1]["done_reason"] == "length");
  const json whole =
      OllamaAnswerOf({{"choices", {{{"text", "xy"}, {"finish_reason", "stop"}}}}}, "g",
                     OllamaApi::kGenerate, {std::chrono::steady_clock::now(), {}});
  CHECK(whole["response"] == "xy");
  CHECK(whole["done_reason"] == "stop");

  OllamaStream failing("g", OllamaApi::kChat, {std::chrono::steady_clock::now(), {}});
  lines = NdjsonLines(failing.Feed("data: {\"error\":{\"message\":\"backend died\"}}\n\n"));
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == json{{"error", "backend died"}});
  CHECK(failing.Finish().empty());
}

TEST_CASE("Ollama errors, embeddings and image types", "[unit][ollama]") {
  CHECK(OllamaErrorMessage(R"({"error":{"message":"no","type":"x"}})") == "no");
  CHECK(OllamaErrorMessage(R"({"error":"plain"})") == "plain");
  CHECK(OllamaErrorMessage("Bad Gateway") == "Bad Gateway");
  const json answer = {{"data", {{{"embedding", {1, 2}}}, {{"embedding", {3, 4}}}}},
                       {"usage", {{"prompt_tokens", 6}}}};
  const OllamaClock clock{std::chrono::steady_clock::now(), {}};
  const json embed = OllamaEmbeddingsOf(answer, "e", false, clock);
  CHECK(embed["model"] == "e");
  CHECK(embed["embeddings"] == json{{1, 2}, {3, 4}});
  CHECK(embed["prompt_eval_count"] == 6);
  CHECK(embed.contains("total_duration"));
  CHECK(OllamaEmbeddingsOf(answer, "e", true, clock) == json{{"embedding", {1, 2}}});
  CHECK(ImageDataUrl("UklGRabc") == "data:image/webp;base64,UklGRabc");
  CHECK(ImageDataUrl("data:image/jpeg;base64,xx") == "data:image/jpeg;base64,xx");
}

TEST_CASE("Ollama details from a model's file name", "[unit][ollama]") {
  ModelConfig model;
  model.id = "qwen";
  model.argv = {"llama-server", "--model", "/m/Qwen3-4B-Instruct-Q4_K_M.gguf"};
  const json details = OllamaDetails(&model);
  CHECK(details["format"] == "gguf");
  CHECK(details["family"] == "qwen3");
  CHECK(details["parameter_size"] == "4B");
  CHECK(details["quantization_level"] == "Q4_K_M");
  CHECK(OllamaDigest("qwen").size() == 64);
  // /api/tags: the size of the model's file, when there is one.
  testing::TempDir dir;
  Config config;
  config.models["qwen"] = model;
  config.models["qwen"].argv = {"llama-server", "-m", dir.Write("qwen.gguf", "0123456789")};
  config.models["gone"] = model;
  config.models["gone"].id = "gone";
  const json tags = OllamaTags(config);
  REQUIRE(tags["models"].size() == 2);
  CHECK(tags["models"][0]["name"] == "gone");
  CHECK(tags["models"][0]["size"] == 0);  // its file is not there
  CHECK(tags["models"][1]["size"] == 10);
  CHECK(OllamaDigest("qwen") != OllamaDigest("qwen2"));
  model.capabilities = ModelCapabilities{{"text", "image"}, {"text"}, true, false, 8192};
  const json show = OllamaShow(&model);
  CHECK(show["capabilities"] == json{"completion", "tools", "vision"});
  CHECK(show["model_info"]["qwen3.context_length"] == 8192);
}

}  // namespace
}  // namespace swapd
