// Ollama's API through the real swapd, in front of fake backends that speak only OpenAI: the
// listings, /api/chat and /api/generate streamed and not (tools, images, format, think),
// keep_alive (0 and a duration), embeddings, and bad input answered with Ollama's {"error"} shape.
#include <httplib.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "base/time_text.h"
#include "base/unix_time.h"
#include "tests/support/http_wait.h"
#include "tests/support/swapd_process.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

std::string OllamaConfig() {
  return "models:\n" +
         FakeModelYaml("qwen3", FreeLoopbackPort(), "-m /models/Qwen3-4B-Q4_K_M.gguf",
                       "    aliases: [q]\n"
                       "    capabilities:\n      in: [text, image]\n      tools: true\n") +
         FakeModelYaml("coder", FreeLoopbackPort()) +
         "peers:\n  far:\n    proxy: http://127.0.0.1:9\n    models: [big]\n";
}

HttpReply OllamaPost(const std::string& url, const std::string& path, const json& body) {
  return HttpPost(url, path, body.dump(), "application/json", 60s);
}

json JsonOf(const HttpReply& reply) {
  INFO(reply.Describe());
  REQUIRE(reply.status == 200);
  return json::parse(reply.body);
}

std::vector<json> NdjsonOf(const std::string& body) {
  std::vector<json> lines;
  size_t start = 0;
  for (size_t end; (end = body.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(json::parse(body.substr(start, end - start)));
  }
  CHECK(start == body.size());
  return lines;
}

// The ids /running lists.
std::vector<std::string> Running(const std::string& url) {
  std::vector<std::string> ids;
  HttpReply reply = HttpGet(url, "/running");
  if (reply.status != 200) return ids;
  const json running = json::parse(reply.body);
  for (const json& m : running["running"]) ids.push_back(m["model"]);
  return ids;
}

TEST_CASE("Ollama listings: /api/version, HEAD /, /api/tags, /api/show, /api/ps",
          "[integration][ollama]") {
  auto swapd = StartSwapd(OllamaConfig());
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  CHECK(JsonOf(HttpGet(url, "/api/version"))["version"].is_string());
  httplib::Client client(url);
  auto head = client.Head("/");
  REQUIRE(head);
  CHECK(head->status == 200);

  const json tags = JsonOf(HttpGet(url, "/api/tags"));
  REQUIRE(tags["models"].size() == 3);
  CHECK(tags["models"][0]["name"] == "coder");
  CHECK(tags["models"][1]["name"] == "far/big");
  const json& qwen = tags["models"][2];
  CHECK(qwen["name"] == "qwen3");
  CHECK(qwen["model"] == "qwen3");
  CHECK(qwen["size"] == 0);
  CHECK(qwen["digest"].get<std::string>().size() == 64);
  CHECK(qwen.contains("modified_at"));
  CHECK(qwen["details"]["format"] == "gguf");
  CHECK(qwen["details"]["quantization_level"] == "Q4_K_M");
  CHECK(qwen["details"]["parameter_size"] == "4B");

  const json show = JsonOf(OllamaPost(url, "/api/show", {{"model", "qwen3:latest"}}));
  CHECK(show["capabilities"] == json{"completion", "tools", "vision"});
  CHECK(show["details"]["family"] == "qwen3");
  CHECK(show.contains("modelfile"));
  CHECK(JsonOf(OllamaPost(url, "/api/show", {{"name", "q"}}))["model_info"]["general.basename"] ==
        "qwen3");
  HttpReply unknown = OllamaPost(url, "/api/show", {{"model", "nope"}});
  CHECK(unknown.status == 404);
  CHECK(json::parse(unknown.body) == json{{"error", "model \"nope\" not found"}});

  CHECK(JsonOf(HttpGet(url, "/api/ps"))["models"].empty());
  const json chat = {
      {"model", "coder"}, {"stream", false}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
  REQUIRE(OllamaPost(url, "/api/chat", chat).status == 200);
  const json ps = JsonOf(HttpGet(url, "/api/ps"));
  REQUIRE(ps["models"].size() == 1);
  CHECK(ps["models"][0]["name"] == "coder");
  CHECK(ps["models"][0].contains("expires_at"));
  CHECK(ps["models"][0].contains("size_vram"));
  // swapd's own /api/ routes are still there.
  CHECK(HttpGet(url, "/api/models").status == 200);
}

TEST_CASE("Ollama /api/chat and /api/generate, streamed and not", "[integration][ollama]") {
  auto swapd = StartSwapd(OllamaConfig());
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  const json messages = {{{"role", "user"}, {"content", "hello there"}}};

  // Streamed (the default) through an alias: the first request starts the model.
  StreamedReply streamed =
      StreamPost(url, "/api/chat", json{{"model", "q"}, {"messages", messages}}.dump());
  INFO(streamed.body);
  REQUIRE(streamed.status == 200);
  CHECK(streamed.content_type == "application/x-ndjson");
  std::vector<json> lines = NdjsonOf(streamed.body);
  REQUIRE(lines.size() >= 2);
  std::string text;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    CHECK(lines[i]["done"] == false);
    CHECK(lines[i]["model"] == "q");
    CHECK(lines[i]["message"]["role"] == "assistant");
    text += lines[i]["message"]["content"].get<std::string>();
  }
  CHECK_FALSE(text.empty());
  const json& last = lines.back();
  CHECK(last["done"] == true);
  CHECK(last["done_reason"] == "stop");
  CHECK(last["eval_count"] == 16);  // the fake's default length
  CHECK(last["prompt_eval_count"].get<int>() > 0);
  CHECK(last["eval_duration"].get<int64_t>() > 0);
  CHECK(last["load_duration"].get<int64_t>() > 0);  // this request started the model
  CHECK(last["total_duration"].get<int64_t>() >= last["load_duration"].get<int64_t>());

  // Not streamed, with num_predict: one object; the model was ready, so no load.
  const json whole = JsonOf(OllamaPost(url, "/api/chat",
                                       {{"model", "qwen3"},
                                        {"stream", false},
                                        {"options", {{"num_predict", 3}}},
                                        {"messages", messages}}));
  CHECK(whole["done"] == true);
  CHECK(whole["done_reason"] == "length");
  CHECK(whole["eval_count"] == 3);
  CHECK(whole["load_duration"] == 0);
  CHECK_FALSE(whole["message"]["content"].get<std::string>().empty());

  // Generate, streamed and not.
  StreamedReply generated =
      StreamPost(url, "/api/generate",
                 json{{"model", "qwen3:latest"}, {"prompt", "why is the sky blue"}}.dump());
  REQUIRE(generated.status == 200);
  lines = NdjsonOf(generated.body);
  REQUIRE(lines.size() >= 2);
  CHECK(lines[0]["response"].is_string());
  CHECK(lines.back()["done"] == true);
  const json one = JsonOf(OllamaPost(
      url, "/api/generate",
      {{"model", "qwen3"}, {"stream", false}, {"system", "be brief"}, {"prompt", "why"}}));
  CHECK(one["done"] == true);
  CHECK_FALSE(one["response"].get<std::string>().empty());
  CHECK(one.contains("prompt_eval_duration"));

  // raw: the client's own prompt (an editor's fill-in-the-middle) to /v1/completions as it is.
  const std::string fim = "<|fim_prefix|>int x<|fim_suffix|>;<|fim_middle|>";
  const json raw = JsonOf(OllamaPost(url, "/api/generate",
                                     {{"model", "qwen3"},
                                      {"stream", false},
                                      {"raw", true},
                                      {"system", "unused"},
                                      {"prompt", fim}}));
  CHECK(raw["done"] == true);
  CHECK_FALSE(raw["response"].get<std::string>().empty());
  const json sent = JsonOf(HttpGet(url, "/upstream/qwen3/last-request"));
  CHECK(sent["path"] == "/v1/completions");
  CHECK(json::parse(sent["body"].get<std::string>())["prompt"] == fim);
  StreamedReply raw_streamed = StreamPost(
      url, "/api/generate", json{{"model", "qwen3"}, {"raw", true}, {"prompt", fim}}.dump());
  REQUIRE(raw_streamed.status == 200);
  lines = NdjsonOf(raw_streamed.body);
  text.clear();
  for (const json& line : lines) text += line["response"].get<std::string>();
  CHECK(text == raw["response"].get<std::string>());
  CHECK(lines.back()["done"] == true);

  // The requests went the OpenAI routes' way: recorded in the activity history.
  CHECK(WaitFor(
      [&] {
        HttpReply activity = HttpGet(url, "/api/metrics/activity");
        return activity.status == 200 && activity.body.find("/api/chat") != std::string::npos;
      },
      20s));
}

TEST_CASE("Ollama tools, images, format and think reach the backend and come back",
          "[integration][ollama]") {
  auto swapd = StartSwapd(OllamaConfig());
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  const json tools = {
      {{"type", "function"},
       {"function", {{"name", "get_weather"}, {"parameters", {{"type", "object"}}}}}}};
  const json ask = {{{"role", "user"}, {"content", "Paris weather"}}};

  const json called = JsonOf(OllamaPost(url, "/api/chat",
                                        {{"model", "qwen3"},
                                         {"stream", false},
                                         {"think", true},
                                         {"tools", tools},
                                         {"messages", ask}}));
  CHECK(called["message"]["thinking"] == "thinking about it");
  CHECK(called["message"]["tool_calls"] ==
        json::parse(R"([{"function": {"name": "get_weather", "arguments": {"text": "Paris"}}}])"));

  StreamedReply streamed = StreamPost(
      url, "/api/chat", json{{"model", "qwen3"}, {"tools", tools}, {"messages", ask}}.dump());
  REQUIRE(streamed.status == 200);
  json streamed_calls;
  for (const json& line : NdjsonOf(streamed.body)) {
    if (line.contains("message") && line["message"].contains("tool_calls")) {
      streamed_calls = line["message"]["tool_calls"];
    }
  }
  CHECK(streamed_calls == called["message"]["tool_calls"]);

  // The tool's result goes back: the model answers in text.
  json follow = ask;
  follow.push_back(
      {{"role", "assistant"}, {"content", ""}, {"tool_calls", called["message"]["tool_calls"]}});
  follow.push_back({{"role", "tool"}, {"tool_name", "get_weather"}, {"content", "sunny"}});
  const json answered = JsonOf(
      OllamaPost(url, "/api/chat",
                 {{"model", "qwen3"}, {"stream", false}, {"tools", tools}, {"messages", follow}}));
  CHECK_FALSE(answered["message"].contains("tool_calls"));
  CHECK_FALSE(answered["message"]["content"].get<std::string>().empty());

  // Images become image parts: the fake names their media types first.
  const json seen =
      JsonOf(OllamaPost(url, "/api/generate",
                        {{"model", "qwen3"},
                         {"stream", false},
                         {"prompt", "what is this"},
                         {"images", {"iVBORw0KGgoAAAANSUhEUg==", "/9j/4AAQSkZJRg=="}}}));
  CHECK(seen["response"].get<std::string>().starts_with("image/png image/jpeg "));

  // format json: the fake answers a prompt that asks for JSON with a JSON document.
  const json formatted = JsonOf(OllamaPost(
      url, "/api/chat",
      {{"model", "qwen3"},
       {"stream", false},
       {"format", "json"},
       {"options", {{"num_predict", 200}}},
       {"messages", {{{"role", "user"}, {"content", "Answer in JSON with \"city\""}}}}}));
  CHECK(json::accept(formatted["message"]["content"].get<std::string>()));
}

TEST_CASE("Ollama keep_alive 0 unloads the model after the answer; embeddings",
          "[integration][ollama]") {
  auto swapd = StartSwapd(OllamaConfig());
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  const json embed =
      JsonOf(OllamaPost(url, "/api/embed", {{"model", "coder"}, {"input", {"a", "b c"}}}));
  CHECK(embed["model"] == "coder");
  REQUIRE(embed["embeddings"].size() == 2);
  CHECK(embed["embeddings"][0].size() == 16);
  CHECK(embed["prompt_eval_count"].get<int>() > 0);
  const json legacy =
      JsonOf(OllamaPost(url, "/api/embeddings", {{"model", "coder"}, {"prompt", "a"}}));
  CHECK(legacy["embedding"] == embed["embeddings"][0]);

  CHECK(Running(url) == std::vector<std::string>{"coder"});
  StreamedReply streamed = StreamPost(
      url, "/api/generate", json{{"model", "coder"}, {"prompt", "hi"}, {"keep_alive", 0}}.dump());
  REQUIRE(streamed.status == 200);
  CHECK(NdjsonOf(streamed.body).back()["done"] == true);
  CHECK(WaitFor([&] { return Running(url).empty(); }, 30s));

  const json whole = JsonOf(OllamaPost(url, "/api/chat",
                                       {{"model", "coder"},
                                        {"stream", false},
                                        {"keep_alive", "0s"},
                                        {"messages", {{{"role", "user"}, {"content", "hi"}}}}}));
  CHECK(whole["done"] == true);
  CHECK(WaitFor([&] { return Running(url).empty(); }, 30s));

  // Ollama's load and unload idiom: nothing to generate.
  const json loaded =
      JsonOf(OllamaPost(url, "/api/generate", {{"model", "coder"}, {"stream", false}}));
  CHECK(loaded["done_reason"] == "load");
  CHECK(loaded["load_duration"].get<int64_t>() > 0);
  CHECK(Running(url) == std::vector<std::string>{"coder"});
  StreamedReply unloaded =
      StreamPost(url, "/api/chat",
                 json{{"model", "coder"}, {"messages", json::array()}, {"keep_alive", 0}}.dump());
  REQUIRE(unloaded.status == 200);
  CHECK(NdjsonOf(unloaded.body).back()["done_reason"] == "unload");
  CHECK(WaitFor([&] { return Running(url).empty(); }, 30s));

  // A duration is this residency's ttl, reported by /running and /api/ps.
  JsonOf(
      OllamaPost(url, "/api/generate",
                 {{"model", "coder"}, {"prompt", "hi"}, {"stream", false}, {"keep_alive", "1h"}}));
  const json running = JsonOf(HttpGet(url, "/running"));
  REQUIRE(running["running"].size() == 1);
  CHECK(running["running"][0]["ttl"] == 3600);
  const json ps = JsonOf(HttpGet(url, "/api/ps"));
  REQUIRE(ps["models"].size() == 1);
  const auto expires = ParseRfc3339(ps["models"][0]["expires_at"].get<std::string>());
  REQUIRE(expires.has_value());
  const int64_t now = UnixNow();
  CHECK(*expires > now + 3000);
  CHECK(*expires <= now + 3600);

  // "coder" has no ttl in the config, yet idles out after keep_alive's 1s.
  const json timed = JsonOf(
      OllamaPost(url, "/api/generate",
                 {{"model", "coder"}, {"prompt", "hi"}, {"stream", false}, {"keep_alive", "1s"}}));
  CHECK(timed["done"] == true);
  CHECK(WaitFor([&] { return Running(url).empty(); }, 30s));
  CHECK_THAT(swapd.value().process->Output(), Catch::Contains("model coder: stopping (ttl)"));
}

TEST_CASE("Ollama errors: unknown model 404, bad JSON and wrong types 400, model files 501",
          "[integration][ollama]") {
  auto swapd = StartSwapd(OllamaConfig());
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  auto error_of = [](const HttpReply& reply, int status) {
    INFO(reply.Describe());
    CHECK(reply.status == status);
    const json body = json::parse(reply.body, nullptr, false);
    REQUIRE(body.is_object());
    CHECK(body.size() == 1);
    return body.value("error", "");
  };
  CHECK(error_of(OllamaPost(url, "/api/chat", {{"model", "nope:7b"}, {"messages", json::array()}}),
                 404) == "model \"nope:7b\" not found");
  CHECK(error_of(OllamaPost(url, "/api/generate", {{"model", "nope"}, {"prompt", "x"}}), 404) ==
        "model \"nope\" not found");
  CHECK(error_of(OllamaPost(url, "/api/embed", {{"model", "nope"}, {"input", "x"}}), 404) ==
        "model \"nope\" not found");
  CHECK(error_of(HttpPost(url, "/api/chat", "{not json"), 400) ==
        "invalid JSON in the request body");
  CHECK(error_of(OllamaPost(url, "/api/chat", {{"model", "qwen3"}, {"messages", "hi"}}), 400) ==
        "messages must be an array");
  CHECK(error_of(OllamaPost(url, "/api/generate", {{"model", "qwen3"}, {"prompt", 5}}), 400) ==
        "prompt must be a string");
  CHECK(error_of(OllamaPost(url, "/api/chat", {{"messages", json::array()}}), 400) ==
        "model is required");
  CHECK(error_of(OllamaPost(url, "/api/pull", {{"model", "llama3"}}), 501)
            .starts_with("swapd serves the models of its config"));
  httplib::Client client(url);
  auto deleted = client.Delete("/api/delete", R"({"model":"qwen3"})", "application/json");
  REQUIRE(deleted);
  CHECK(deleted->status == 501);
  // A peer that is down: a 5xx with the message, Ollama-shaped.
  HttpReply down = OllamaPost(url, "/api/chat",
                              {{"model", "far/big"},
                               {"stream", false},
                               {"messages", {{{"role", "user"}, {"content", "x"}}}}});
  INFO(down.Describe());
  CHECK(down.status >= 500);
  CHECK_THAT(json::parse(down.body).value("error", ""), Catch::Contains("far"));
  // Nothing of that stopped swapd.
  CHECK(HttpGet(url, "/health").status == 200);
}

}  // namespace
}  // namespace swapd::testing
