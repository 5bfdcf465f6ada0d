// Integration tests of the front door: the real swapd binary, real fake-llama-server backends,
// loopback sockets, ephemeral ports. Groups and swapping, streaming, filters, errors (what
// happens when a client or a backend goes away: front_door_failure_test.cpp).
#include <httplib.h>
#include <catch2/catch.hpp>

#include <future>
#include <nlohmann/json.hpp>

#include "tests/support/http_wait.h"
#include "tests/support/latch.h"
#include "tests/support/swapd_process.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

json RunningModels(const std::string& base_url) {
  HttpReply r = HttpGet(base_url, "/running");
  REQUIRE(r.status == 200);
  return json::parse(r.body)["running"];
}

bool IsRunning(const std::string& base_url, const std::string& model) {
  for (const auto& m : RunningModels(base_url)) {
    if (m["model"] == model && m["state"] == "ready") return true;
  }
  return false;
}

TEST_CASE("duo members stay resident together and a solo model swaps them out",
          "[integration][front]") {
  int p1 = FreeLoopbackPort(), p2 = FreeLoopbackPort(), p3 = FreeLoopbackPort();
  std::string yaml =
      "healthCheckTimeout: 30\nmodels:\n" + FakeModelYaml("fd-big", p1, "--tokens-per-second 50") +
      FakeModelYaml("fd-small", p2, "--tokens-per-second 50") + FakeModelYaml("fd-solo", p3) +
      "groups:\n  duo:\n    swap: false\n    exclusive: true\n"
      "    members: [fd-big, fd-small]\n";
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;

  // Each stream, on its first chunk, waits for the other's first chunk: both can only get there
  // if both members run at the same time.
  Latch big_started, small_started;
  auto stream = [&](const std::string& model, Latch& mine, Latch& other) {
    bool waited = false;
    StreamedReply reply =
        StreamPost(url, "/v1/chat/completions", ChatBody(model, true, 20), [&](const std::string&) {
          if (!waited) {
            waited = true;
            mine.Raise();
            return other.Wait(60s);
          }
          return true;
        });
    return reply;
  };
  auto big = std::async(std::launch::async, stream, "fd-big", std::ref(big_started),
                        std::ref(small_started));
  auto small = std::async(std::launch::async, stream, "fd-small", std::ref(small_started),
                          std::ref(big_started));
  StreamedReply big_reply = big.get(), small_reply = small.get();
  INFO(swapd.value().process->Output());
  CHECK(big_reply.status == 200);
  CHECK(small_reply.status == 200);
  CHECK_THAT(big_reply.body, Catch::Contains("data: [DONE]"));
  CHECK_THAT(small_reply.body, Catch::Contains("data: [DONE]"));
  CHECK(IsRunning(url, "fd-big"));
  CHECK(IsRunning(url, "fd-small"));

  // A model outside the duo swaps both out: their processes are gone when it answers.
  HttpReply solo =
      HttpPost(url, "/v1/chat/completions", ChatBody("fd-solo", false), "application/json", 60s);
  CHECK(solo.status == 200);
  CHECK(NoneWithArgWithin("--model fd-big "));
  CHECK(NoneWithArgWithin("--model fd-small "));
  CHECK_FALSE(IsRunning(url, "fd-big"));

  // And back.
  HttpReply again =
      HttpPost(url, "/v1/chat/completions", ChatBody("fd-big", false), "application/json", 60s);
  CHECK(again.status == 200);
  CHECK(NoneWithArgWithin("--model fd-solo "));
  CHECK(IsRunning(url, "fd-big"));
}

TEST_CASE("a persistent group survives swaps of other models", "[integration][front]") {
  int p1 = FreeLoopbackPort(), p2 = FreeLoopbackPort(), p3 = FreeLoopbackPort();
  std::string yaml = "models:\n" + FakeModelYaml("pg-keep", p1) + FakeModelYaml("pg-a", p2) +
                     FakeModelYaml("pg-b", p3) +
                     "groups:\n  always:\n    persistent: true\n    exclusive: false\n"
                     "    members: [pg-keep]\n";
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  REQUIRE(HttpPost(url, "/v1/completions", R"({"model":"pg-keep","prompt":"x"})").status == 200);
  auto keep_pids = PidsWithArg("--model pg-keep ");
  REQUIRE(keep_pids.size() == 1);
  REQUIRE(HttpPost(url, "/v1/completions", R"({"model":"pg-a","prompt":"x"})").status == 200);
  REQUIRE(HttpPost(url, "/v1/completions", R"({"model":"pg-b","prompt":"x"})").status == 200);
  CHECK(PidsWithArg("--model pg-keep ") == keep_pids);
  CHECK(NoneWithArgWithin("--model pg-a "));
  CHECK(IsRunning(url, "pg-keep"));
  CHECK(IsRunning(url, "pg-b"));
}

TEST_CASE("a swap waits for in-flight streams, which are never cut", "[integration][front]") {
  int p1 = FreeLoopbackPort(), p2 = FreeLoopbackPort();
  std::string yaml =
      "models:\n" + FakeModelYaml("sw-a", p1, "--tokens-per-second 40") + FakeModelYaml("sw-b", p2);
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  Latch first_chunk;
  auto a = std::async(std::launch::async, [&] {
    return StreamPost(url, "/v1/chat/completions", ChatBody("sw-a", true, 30),
                      [&](const std::string&) {
                        first_chunk.Raise();
                        return true;
                      });
  });
  REQUIRE(first_chunk.Wait(60s));
  // sw-b needs sw-a gone; it must wait for the stream to finish, then succeed.
  HttpReply b =
      HttpPost(url, "/v1/chat/completions", ChatBody("sw-b", false), "application/json", 60s);
  StreamedReply a_reply = a.get();
  CHECK(a_reply.status == 200);
  CHECK(a_reply.error.empty());
  CHECK_THAT(a_reply.body, Catch::Contains("data: [DONE]"));
  CHECK_THAT(a_reply.body, !Catch::Contains("\"error\""));
  CHECK(b.status == 200);
}

TEST_CASE("concurrencyLimit answers 429 with Retry-After", "[integration][front]") {
  int port = FreeLoopbackPort();
  std::string yaml = "models:\n" + FakeModelYaml("cl-m", port, "--tokens-per-second 20",
                                                 "    concurrencyLimit: 1\n");
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  Latch streaming, release;
  auto holder = std::async(std::launch::async, [&] {
    return StreamPost(url, "/v1/chat/completions", ChatBody("cl-m", true, 200),
                      [&](const std::string&) {
                        streaming.Raise();
                        return !release.Wait(0ms);  // hang up once released
                      });
  });
  REQUIRE(streaming.Wait(60s));
  httplib::Client client(url);
  auto res = client.Post("/v1/chat/completions", ChatBody("cl-m", false), "application/json");
  REQUIRE(res);
  CHECK(res->status == 429);
  CHECK(res->get_header_value("Retry-After") == "1");
  CHECK_THAT(ErrorMessage(res->body), Catch::Contains("cl-m"));
  release.Raise();
  holder.get();
}

TEST_CASE("aliases, useModelName and filters reach the backend as configured",
          "[integration][front]") {
  int port = FreeLoopbackPort();
  std::string yaml = "models:\n" + FakeModelYaml("fl-real", port, "",
                                                 "    aliases: [fl-nick]\n"
                                                 "    useModelName: served-name\n"
                                                 "    filters:\n"
                                                 "      stripParams: \"temperature, top_p\"\n"
                                                 "      setParams:\n"
                                                 "        top_k: 7\n");
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  HttpReply r = HttpPost(url, "/v1/chat/completions",
                         R"({"model":"fl-nick","temperature":0.5,"top_p":0.9,"max_tokens":2,)"
                         R"("messages":[{"role":"user","content":"hi"}]})");
  REQUIRE(r.status == 200);
  HttpReply last = HttpGet(url, "/upstream/fl-real/last-request");
  REQUIRE(last.status == 200);
  json seen = json::parse(json::parse(last.body)["body"].get<std::string>());
  CHECK(seen["model"] == "served-name");
  CHECK_FALSE(seen.contains("temperature"));
  CHECK_FALSE(seen.contains("top_p"));
  CHECK(seen["top_k"] == 7);
  CHECK(seen["max_tokens"] == 2);
}

TEST_CASE("a body no filter touches reaches the backend byte for byte", "[integration][front]") {
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("bb-m", port));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  const std::string body =
      "{ \"model\" : \"bb-m\",\n  \"prompt\": \"x\", \"n_predict\": 1.50e0, \"z\": \"\\u00e9\" }";
  REQUIRE(HttpPost(url, "/completion", body).status == 200);
  HttpReply last = HttpGet(url, "/upstream/bb-m/last-request");
  REQUIRE(last.status == 200);
  CHECK(json::parse(last.body)["body"] == body);
}

TEST_CASE("bad requests get OpenAI-shaped 4xx errors", "[integration][front]") {
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("br-m", port));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  struct Case {
    const char* path;
    const char* body;
    int status;
    const char* message;
  } cases[] = {
      {"/v1/chat/completions", R"({"model":"nope","messages":[]})", 404,
       "\"nope\" is not configured"},
      {"/v1/chat/completions", R"({"model": "br-m", )", 400, "malformed JSON"},
      {"/v1/chat/completions", R"({"messages":[]})", 400, "no model"},
      {"/v1/embeddings", R"({"model": 3})", 400, "must be a string"},
      {"/v1/nothing-here", R"({})", 404, "no route"},
  };
  for (const auto& c : cases) {
    INFO(c.path << " " << c.body);
    HttpReply r = HttpPost(url, c.path, c.body);
    CHECK(r.status == c.status);
    CHECK_THAT(ErrorMessage(r.body), Catch::Contains(c.message));
  }
  // Nothing was started by any of them.
  CHECK(RunningModels(url).empty());
}

TEST_CASE("GET /v1/models lists models sorted, hides unlisted, shows status",
          "[integration][front]") {
  int p1 = FreeLoopbackPort(), p2 = FreeLoopbackPort(), p3 = FreeLoopbackPort();
  std::string yaml = "includeAliasesInList: true\nmodels:\n" +
                     FakeModelYaml("ls-b", p1, "", "    aliases: [ls-b-alias]\n    name: Bee\n") +
                     FakeModelYaml("ls-a", p2, "", "    description: first\n") +
                     FakeModelYaml("ls-hidden", p3, "", "    unlisted: true\n");
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  REQUIRE(HttpPost(url, "/v1/completions", R"({"model":"ls-a","prompt":"x"})").status == 200);
  for (const char* path : {"/v1/models", "/models"}) {
    HttpReply r = HttpGet(url, path);
    REQUIRE(r.status == 200);
    json list = json::parse(r.body);
    CHECK(list["object"] == "list");
    std::vector<std::string> ids;
    for (const auto& m : list["data"]) {
      ids.push_back(m["id"]);
      CHECK(m["object"] == "model");
      CHECK(m["owned_by"].is_string());
      CHECK(m["created"].is_number());
    }
    CHECK(ids == std::vector<std::string>{"ls-a", "ls-b", "ls-b-alias"});
    CHECK(list["data"][0]["status"]["value"] == "loaded");
    CHECK(list["data"][0]["description"] == "first");
    CHECK(list["data"][1]["status"]["value"] == "unloaded");
    CHECK(list["data"][1]["name"] == "Bee");
  }
}

TEST_CASE("/upstream passes a path through and starts the model", "[integration][front]") {
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("org/up-m", port));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  HttpReply props = HttpGet(url, "/upstream/org/up-m/props", 60s);
  CHECK(props.status == 200);
  CHECK(IsRunning(url, "org/up-m"));
  HttpReply env = HttpGet(url, "/upstream/org/up-m/slow?ms=1");
  CHECK(env.status == 200);
  // HEAD: the backend's length of the body GET gets, and no body.
  httplib::Client client(url);
  httplib::Result head = client.Head("/upstream/org/up-m/props");
  REQUIRE(head);
  CHECK(head->status == 200);
  CHECK(head->get_header_value("Content-Length") == std::to_string(props.body.size()));
  CHECK(head->body.empty());
  // An answer without Content-Type (a 204) gets none on the way either.
  httplib::Result bare = client.Get("/upstream/org/up-m/no-content");
  REQUIRE(bare);
  CHECK(bare->status == 204);
  CHECK_FALSE(bare->has_header("Content-Type"));
  HttpReply missing = HttpGet(url, "/upstream/org/nope/props");
  CHECK(missing.status == 404);
}

TEST_CASE("ttl unloads an idle model; preload starts one at boot", "[integration][front]") {
  int p1 = FreeLoopbackPort(), p2 = FreeLoopbackPort();
  std::string yaml = "hooks:\n  on_startup:\n    preload: [tp-pre]\nmodels:\n" +
                     FakeModelYaml("tp-ttl", p1, "", "    ttl: 1\n") +
                     FakeModelYaml("tp-pre", p2, "", "    ttl: 0\n") +
                     "groups:\n  g1:\n    exclusive: false\n    members: [tp-ttl]\n"
                     "  g2:\n    exclusive: false\n    members: [tp-pre]\n";
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  PollResult preloaded = PollUntil(
      url, "/running",
      [](const HttpReply& r) {
        return r.body.find("tp-pre") != std::string::npos &&
               r.body.find("ready") != std::string::npos;
      },
      30s);
  CHECK(preloaded.met);
  REQUIRE(HttpPost(url, "/v1/completions", R"({"model":"tp-ttl","prompt":"x"})").status == 200);
  PollResult unloaded = PollUntil(
      url, "/running",
      [](const HttpReply& r) {
        return r.status == 200 && r.body.find("tp-ttl") == std::string::npos;
      },
      30s, 100ms);
  CHECK(unloaded.met);
  CHECK(NoneWithArgWithin("--model tp-ttl "));
  CHECK(IsRunning(url, "tp-pre"));
}

TEST_CASE("apiKeys are enforced everywhere but /health", "[integration][front]") {
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("apiKeys: [sk-test-123]\nmodels:\n" + FakeModelYaml("ak-m", port));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  httplib::Client client(url);
  client.set_read_timeout(std::chrono::seconds(60));  // one request cold-starts the backend
  auto denied = client.Get("/v1/models");
  REQUIRE(denied);
  CHECK(denied->status == 401);
  CHECK(denied->has_header("WWW-Authenticate"));
  CHECK_THAT(ErrorMessage(denied->body), Catch::Contains("API key"));
  auto health = client.Get("/health");
  REQUIRE(health);
  CHECK(health->status == 200);
  auto wrong = client.Get("/v1/models", {{"Authorization", "Bearer sk-wrong"}});
  REQUIRE(wrong);
  CHECK(wrong->status == 401);
  auto bearer = client.Get("/v1/models", {{"Authorization", "Bearer sk-test-123"}});
  REQUIRE(bearer);
  CHECK(bearer->status == 200);
  auto header = client.Post("/v1/completions", {{"x-api-key", "sk-test-123"}},
                            R"({"model":"ak-m","prompt":"x"})", "application/json");
  REQUIRE(header);
  CHECK(header->status == 200);
  CHECK(swapd.value().process->Output().find("sk-test-123") == std::string::npos);
}

TEST_CASE("unload stops models; multipart transcription routes by form field",
          "[integration][front]") {
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("ul-m", port));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  httplib::Client client(url);
  httplib::MultipartFormDataItems form = {{"model", "ul-m", "", ""},
                                          {"file", "RIFF....", "a.wav", "audio/wav"}};
  auto t = client.Post("/v1/audio/transcriptions", form);
  REQUIRE(t);
  CHECK(t->status == 200);
  CHECK(json::parse(t->body)["model"] == "ul-m");
  CHECK(IsRunning(url, "ul-m"));
  auto unload = client.Post("/api/models/unload/ul-m", "", "text/plain");
  REQUIRE(unload);
  CHECK(unload->status == 200);
  CHECK_FALSE(IsRunning(url, "ul-m"));
  CHECK(NoneWithArgWithin("--model ul-m "));
  auto missing = client.Post("/api/models/unload/none", "", "text/plain");
  REQUIRE(missing);
  CHECK(missing->status == 404);
}

}  // namespace
}  // namespace swapd::testing
