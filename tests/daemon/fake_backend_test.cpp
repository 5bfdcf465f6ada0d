// Integration tests of tests/fake_backend (fake-llama-server), the llama-server imitation every
// other integration test relies on: its llama-server-shaped routes, its test routes and its fault
// switches. Each test starts the real binary on an ephemeral loopback port.
#include <signal.h>
#include <unistd.h>

#include <httplib.h>
#include <atomic>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/support/child_process.h"
#include "tests/support/fake_backend_process.h"
#include "tests/support/http_wait.h"
#include "tests/support/swapd_process.h"

namespace swapd::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr milliseconds kDeadline = seconds(10);

// A fake that has finished loading, unless `loaded` is false (the tests of the load itself): it
// prints its load lines after it listens, even with no --load-ms, and a request sent before it
// is done gets 503 "Loading model" (seen on a loaded CI machine).
FakeBackend Start(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                  bool loaded = true) {
  Result<FakeBackend> started = StartFakeBackend(args, env);
  INFO(started.status().ToString());
  REQUIRE(started.ok());
  if (loaded) REQUIRE(WaitUntilLoaded(started.value()));
  return std::move(started).value();
}

json ParseJson(const HttpReply& reply) {
  INFO(reply.Describe());
  json body = json::parse(reply.body, nullptr, false);
  REQUIRE_FALSE(body.is_discarded());
  return body;
}

// The "data: ..." payloads of an SSE body, in order.
std::vector<std::string> SseData(const std::string& body) {
  std::vector<std::string> events;
  size_t start = 0;
  for (size_t end; (end = body.find("\n\n", start)) != std::string::npos; start = end + 2) {
    std::string event = body.substr(start, end - start);
    if (event.rfind("data: ", 0) == 0) events.push_back(event.substr(6));
  }
  return events;
}

const std::string kChatBody =
    R"({"model":"asked-model","messages":[{"role":"user","content":"tell me a story"}],"max_tokens":5})";

TEST_CASE("fake backend: /health is 503 while loading, then 200", "[integration][fake]") {
  SECTION("never ready") {
    FakeBackend fake = Start({"--never-ready"}, {}, false);
    HttpReply health = HttpGet(fake.base_url, "/health");
    CHECK(health.status == 503);
    CHECK(ParseJson(health) ==
          json::parse(
              R"({"error":{"code":503,"message":"Loading model","type":"unavailable_error"}})"));
    HttpReply chat = HttpPost(fake.base_url, "/v1/chat/completions", kChatBody);
    CHECK(chat.status == 503);
  }
  SECTION("ready after --load-ms") {
    const auto started = std::chrono::steady_clock::now();
    FakeBackend fake = Start({"--load-ms", "600", "--log-lines", "5"}, {}, false);
    PollResult ready = WaitForStatus(fake.base_url, "/health", 200, kDeadline);
    INFO(ready.last.Describe() << "\n" << fake.process->Output());
    REQUIRE(ready.met);
    CHECK(std::chrono::steady_clock::now() - started >= milliseconds(600));
    CHECK(ParseJson(ready.last) == json{{"status", "ok"}});
    CHECK(fake.process->WaitForLine("main: model loaded", kDeadline));
    CHECK(fake.process->WaitForLine("llama_model_loader: - kv 4:", kDeadline));
  }
}

TEST_CASE("fake backend: models, props and llama-server flags it does not know",
          "[integration][fake]") {
  FakeBackend fake = Start({"-m", "/models/qwen3-4b.gguf", "-c", "8192", "-ngl", "99",
                            "--flash-attn", "on", "-ctk", "q8_0", "--jinja", "--threads", "8"});
  json models = ParseJson(HttpGet(fake.base_url, "/v1/models"));
  CHECK(models["object"] == "list");
  REQUIRE(models["data"].size() == 1);
  CHECK(models["data"][0]["id"] == "/models/qwen3-4b.gguf");
  CHECK(models["data"][0]["owned_by"] == "llamacpp");
  CHECK(ParseJson(HttpGet(fake.base_url, "/models")) == models);
  json props = ParseJson(HttpGet(fake.base_url, "/props"));
  CHECK(props["default_generation_settings"]["n_ctx"] == 8192);

  FakeBackend aliased = Start({"-m", "/models/x.gguf", "--alias", "short-name"});
  CHECK(ParseJson(HttpGet(aliased.base_url, "/v1/models"))["data"][0]["id"] == "short-name");
}

TEST_CASE("fake backend: non-streamed chat completion", "[integration][fake]") {
  FakeBackend fake = Start({"--model", "served-model"});
  HttpReply reply = HttpPost(fake.base_url, "/v1/chat/completions", kChatBody);
  REQUIRE(reply.status == 200);
  CHECK(reply.content_type.rfind("application/json", 0) == 0);
  json body = ParseJson(reply);
  CHECK(body["object"] == "chat.completion");
  CHECK(body["model"] == "asked-model");  // echoes the request, as llama-server does
  CHECK(body["choices"][0]["message"]["role"] == "assistant");
  CHECK(body["choices"][0]["finish_reason"] == "length");
  const std::string content = body["choices"][0]["message"]["content"];
  CHECK(std::count(content.begin(), content.end(), ' ') == 4);  // five words
  CHECK(body["usage"] == json{{"prompt_tokens", 4}, {"completion_tokens", 5}, {"total_tokens", 9}});
  for (const char* key : {"prompt_n", "prompt_ms", "prompt_per_second", "predicted_n",
                          "predicted_ms", "predicted_per_second"}) {
    CHECK(body["timings"].contains(key));
  }
  CHECK(body["timings"]["predicted_n"] == 5);

  // Same prompt, same text; no model in the request: the served model's id.
  json again = ParseJson(
      HttpPost(fake.base_url, "/v1/chat/completions",
               R"({"messages":[{"role":"user","content":"tell me a story"}],"max_tokens":5})"));
  CHECK(again["choices"][0]["message"]["content"] == content);
  CHECK(again["model"] == "served-model");

  HttpReply invalid = HttpPost(fake.base_url, "/v1/chat/completions", "{not json");
  CHECK(invalid.status == 400);
  CHECK(ParseJson(invalid)["error"]["type"] == "invalid_request_error");
}

TEST_CASE("fake backend: streamed chat completion", "[integration][fake]") {
  FakeBackend fake = Start({"--tokens-per-second", "200"});
  const std::string request =
      R"({"model":"m","stream":true,"stream_options":{"include_usage":true},"max_tokens":6,)"
      R"("messages":[{"role":"user","content":"tell me a story"}]})";
  HttpReply reply = HttpPost(fake.base_url, "/v1/chat/completions", request);
  REQUIRE(reply.status == 200);
  CHECK(reply.content_type == "text/event-stream");
  std::vector<std::string> events = SseData(reply.body);
  INFO(reply.body);
  // role chunk, 6 token chunks, finish chunk, usage chunk, [DONE]
  REQUIRE(events.size() == 10);
  CHECK(events.back() == "[DONE]");
  std::string text;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    json chunk = json::parse(events[i]);
    CHECK(chunk["object"] == "chat.completion.chunk");
    CHECK(chunk["model"] == "m");
    if (!chunk["choices"].empty() && chunk["choices"][0]["delta"].contains("content") &&
        chunk["choices"][0]["delta"]["content"].is_string()) {
      text += chunk["choices"][0]["delta"]["content"].get<std::string>();
    }
  }
  json finish = json::parse(events[7]);
  CHECK(finish["choices"][0]["finish_reason"] == "length");
  json last = json::parse(events[8]);
  CHECK(last["choices"].empty());
  CHECK(last["usage"]["completion_tokens"] == 6);
  CHECK(last["timings"]["predicted_n"] == 6);
  CHECK(last["timings"]["predicted_per_second"] == Approx(200.0));

  json whole = ParseJson(
      HttpPost(fake.base_url, "/v1/chat/completions",
               R"({"max_tokens":6,"messages":[{"role":"user","content":"tell me a story"}]})"));
  CHECK(text == whole["choices"][0]["message"]["content"]);
  CHECK(ParseJson(HttpGet(fake.base_url, "/stats"))["completed_streams"] == 1);
}

TEST_CASE("fake backend: text, native, embedding and transcription APIs", "[integration][fake]") {
  FakeBackend fake = Start({});
  json text =
      ParseJson(HttpPost(fake.base_url, "/v1/completions", R"({"prompt":"a b c","max_tokens":3})"));
  CHECK(text["object"] == "text_completion");
  CHECK(text["usage"]["total_tokens"] == 6);

  json native =
      ParseJson(HttpPost(fake.base_url, "/completion", R"({"prompt":"a b","n_predict":2})"));
  CHECK(native["tokens_predicted"] == 2);
  // "a" is still in the slot from the text request: only "b" is processed (the last prompt
  // token always is).
  CHECK(native["timings"]["prompt_n"] == 1);
  CHECK(native["timings"]["cache_n"] == 1);
  CHECK(native["tokens_evaluated"] == 1);
  HttpReply native_stream =
      HttpPost(fake.base_url, "/completion", R"({"prompt":"a b","n_predict":2,"stream":true})");
  std::vector<std::string> native_events = SseData(native_stream.body);
  REQUIRE(native_events.size() == 3);  // two tokens and the final object; no [DONE] natively
  CHECK(json::parse(native_events[2])["stop"] == true);

  json floats = ParseJson(HttpPost(fake.base_url, "/v1/embeddings", R"({"input":["x","y z"]})"));
  REQUIRE(floats["data"].size() == 2);
  CHECK(floats["data"][0]["embedding"].is_array());
  CHECK(floats["usage"]["prompt_tokens"] == 3);
  json b64 = ParseJson(
      HttpPost(fake.base_url, "/v1/embeddings", R"({"input":"x","encoding_format":"base64"})"));
  CHECK(b64["data"][0]["embedding"].is_string());
  CHECK(b64["data"][0]["embedding"].get<std::string>().size() ==
        4 * ((floats["data"][0]["embedding"].size() * 4 + 2) / 3));

  httplib::Client client(fake.base_url);
  httplib::MultipartFormDataItems items = {{"model", "whisper-1", "", ""},
                                           {"file", "RIFF....WAVE", "a.wav", "audio/wav"}};
  auto result = client.Post("/v1/audio/transcriptions", items);
  REQUIRE(result);
  CHECK(result->status == 200);
  json transcription = json::parse(result->body);
  CHECK(transcription["model"] == "whisper-1");
  CHECK_FALSE(transcription["text"].get<std::string>().empty());
  json recorded = ParseJson(HttpGet(fake.base_url, "/last-request"));
  CHECK(recorded["fields"]["model"] == "whisper-1");
  CHECK(recorded["files"]["file"]["filename"] == "a.wav");
}

TEST_CASE("fake backend: /env and /last-request", "[integration][fake]") {
  FakeBackend fake = Start({}, {"FAKE_TEST_VAR=hello", "CUDA_VISIBLE_DEVICES="});
  json env = ParseJson(HttpGet(fake.base_url, "/env"));
  CHECK(env["FAKE_TEST_VAR"] == "hello");
  REQUIRE(env.contains("CUDA_VISIBLE_DEVICES"));  // present and empty, not unset
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "");

  httplib::Client client(fake.base_url);
  auto posted = client.Post("/v1/chat/completions?trace=1", {{"X-Custom-Header", "abc"}}, kChatBody,
                            "application/json");
  REQUIRE(posted);
  HttpGet(fake.base_url, "/health");  // introspection: not recorded
  json last = ParseJson(HttpGet(fake.base_url, "/last-request"));
  CHECK(last["method"] == "POST");
  CHECK(last["path"] == "/v1/chat/completions");
  CHECK(last["query"] == "trace=1");
  CHECK(last["headers"]["x-custom-header"] == "abc");
  CHECK(last["body"] == kChatBody);
  CHECK(fake.process->WaitForLine(
      "srv  log_server_r: request: POST /v1/chat/completions 127.0.0.1 200", kDeadline));
}

TEST_CASE("fake backend: --exit-during-load", "[integration][fake]") {
  FakeBackend fake =
      Start({"--exit-during-load", "7", "--load-ms", "100", "--log-lines", "3"}, {}, false);
  std::optional<ExitStatus> status = fake.process->WaitForExit(kDeadline);
  REQUIRE(status);
  CHECK(status->ExitedWith(7));
  INFO(fake.process->Output());
  CHECK(fake.process->WaitForLine("llama_model_loader: - kv 2:", kDeadline));
  CHECK(fake.process->WaitForLine("main: exiting due to model loading error", kDeadline));
}

TEST_CASE("fake backend: --crash-after", "[integration][fake]") {
  SECTION("non-streamed: the N-th request gets no answer") {
    FakeBackend fake = Start({"--crash-after", "2"});
    CHECK(HttpPost(fake.base_url, "/v1/chat/completions", kChatBody).status == 200);
    CHECK(HttpGet(fake.base_url, "/env").status == 200);  // not a model request
    CHECK(HttpPost(fake.base_url, "/v1/chat/completions", kChatBody).status == -1);
    std::optional<ExitStatus> status = fake.process->WaitForExit(kDeadline);
    REQUIRE(status);
    CHECK(status->ExitedWith(3));
  }
  SECTION("streamed: dies mid-stream, without [DONE]") {
    FakeBackend fake = Start({"--crash-after", "1"});
    httplib::Client client(fake.base_url);
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/chat/completions";
    req.body = R"({"stream":true,"max_tokens":20,"messages":[{"role":"user","content":"x"}]})";
    std::string received;
    req.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
      received.append(data, size);
      return true;
    };
    httplib::Response res;
    httplib::Error error = httplib::Error::Success;
    CHECK_FALSE(client.send(req, res, error));  // the chunked body never ends properly
    INFO(received);
    CHECK(SseData(received).size() >= 2);  // a few chunks arrived first
    CHECK(received.find("[DONE]") == std::string::npos);
    std::optional<ExitStatus> status = fake.process->WaitForExit(kDeadline);
    REQUIRE(status);
    CHECK(status->ExitedWith(3));
    CHECK(fake.process->WaitForLine("fake: crashing on request 1", kDeadline));
  }
}

TEST_CASE("fake backend: a client that goes away cancels its stream", "[integration][fake]") {
  FakeBackend fake = Start({"--tokens-per-second", "100"});
  httplib::Client client(fake.base_url);
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/chat/completions";
  req.body = R"({"stream":true,"max_tokens":1000,"messages":[{"role":"user","content":"x"}]})";
  req.set_header("Content-Type", "application/json");
  int chunks = 0;
  req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) { return ++chunks < 2; };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  client.send(req, res, error);
  CHECK(chunks == 2);
  PollResult stats = PollUntil(
      fake.base_url, "/stats",
      [](const HttpReply& r) {
        json s = json::parse(r.body, nullptr, false);
        return r.status == 200 && !s.is_discarded() && s["cancelled_streams"] == 1;
      },
      kDeadline);
  INFO(stats.last.Describe());
  REQUIRE(stats.met);
  json s = json::parse(stats.last.body);
  CHECK(s["active_streams"] == 0);
  CHECK(s["completed_streams"] == 0);
  CHECK(s["requests"] == 1);
}

TEST_CASE("fake backend: SIGTERM", "[integration][fake]") {
  SECTION("exits 0 at once, even with an open stream") {
    FakeBackend fake = Start({"--tokens-per-second", "20"});
    std::atomic<bool> streaming{false};
    std::thread client_thread([&] {
      httplib::Client client(fake.base_url);
      client.set_read_timeout(seconds(20));
      httplib::Request req;
      req.method = "POST";
      req.path = "/v1/chat/completions";
      req.body = R"({"stream":true,"max_tokens":400,"messages":[{"role":"user","content":"x"}]})";
      req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) {
        streaming = true;
        return true;
      };
      httplib::Response res;
      httplib::Error error = httplib::Error::Success;
      client.send(req, res, error);
    });
    PollResult open = PollUntil(
        fake.base_url, "/stats", [&](const HttpReply&) { return streaming.load(); }, kDeadline);
    CHECK(open.met);
    fake.process->Signal(SIGTERM);
    std::optional<ExitStatus> status = fake.process->WaitForExit(kDeadline);
    client_thread.join();
    REQUIRE(status);
    CHECK(status->ExitedWith(0));
  }
  SECTION("--ignore-sigterm keeps serving; SIGKILL still ends it") {
    FakeBackend fake = Start({"--ignore-sigterm"});
    fake.process->Signal(SIGTERM);
    CHECK_FALSE(fake.process->WaitForExit(milliseconds(300)));
    CHECK(HttpGet(fake.base_url, "/health").status == 200);
    CHECK(fake.process->Kill().signal == SIGKILL);
  }
}

TEST_CASE("fake backend: --spawn-grandchild stays in the group and dies with it",
          "[integration][fake]") {
  FakeBackend fake = Start({"--spawn-grandchild"});
  std::optional<std::string> line =
      fake.process->WaitForLine("fake: spawned grandchild pid ", kDeadline);
  REQUIRE(line);
  const pid_t grandchild = std::stoi(line->substr(line->rfind(' ') + 1));
  CHECK(::getpgid(grandchild) == fake.process->pgid());
  CHECK_FALSE(ProcessGone(grandchild));
  fake.process->Kill();
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (!ProcessGone(grandchild) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  CHECK(ProcessGone(grandchild));
}

}  // namespace
}  // namespace swapd::testing
