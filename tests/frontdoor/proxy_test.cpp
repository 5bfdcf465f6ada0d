// Integration tests of the proxy with the real swapd and fake backends over loopback: a request
// that did not ask for a stream but gets SSE (whole, or breaking off), a burst of concurrent
// clients, and a backend that goes silent.
#include <httplib.h>
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <vector>

#include "frontdoor/upstream_proxy.h"
#include "tests/support/http_wait.h"
#include "tests/support/swapd_process.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// A chat body whose "stream" key is spelled with a JSON escape: the backend's parser reads it as
// "stream": true, the proxy's scan does not, so the request takes the buffered path and the
// backend answers SSE anyway.
std::string DisguisedStreamBody(const std::string& model, int max_tokens) {
  return R"({"model":")" + model + R"(","\u0073tream":true,"max_tokens":)" +
         std::to_string(max_tokens) + R"(,"messages":[{"role":"user","content":"hi"}]})";
}

TEST_CASE("a non-streamed request whose backend answers SSE gets the events",
          "[integration][proxy]") {
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("px-sse", port));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  HttpReply r = HttpPost(url, "/v1/chat/completions", DisguisedStreamBody("px-sse", 6),
                         "application/json", 60s);
  CHECK(r.status == 200);
  CHECK_THAT(r.content_type, Catch::StartsWith("text/event-stream"));
  CHECK_THAT(r.body, Catch::Contains("chat.completion.chunk"));
  CHECK_THAT(r.body, Catch::EndsWith("data: [DONE]\n\n"));
}

TEST_CASE("a HEAD request gets the backend's Content-Length and no body", "[integration][proxy]") {
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("px-head", port));
  REQUIRE(swapd.ok());
  INFO(swapd.value().process->Output());
  const std::string url = swapd.value().base_url;
  HttpReply get = HttpGet(url, "/upstream/px-head/v1/models", 60s);
  REQUIRE(get.status == 200);
  REQUIRE_FALSE(get.body.empty());
  httplib::Client client(url);
  client.set_read_timeout(60, 0);
  httplib::Result head = client.Head("/upstream/px-head/v1/models");
  REQUIRE(head);
  CHECK(head->status == 200);
  CHECK(head->get_header_value("Content-Length") == std::to_string(get.body.size()));
  CHECK(head->body.empty());
}

TEST_CASE("a non-streamed request whose SSE answer breaks off ends with an error event",
          "[integration][proxy]") {
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("px-crash", port, "--crash-after 1"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  HttpReply r = HttpPost(url, "/v1/chat/completions", DisguisedStreamBody("px-crash", 40),
                         "application/json", 60s);
  INFO(r.Describe());
  CHECK(r.status == 200);
  CHECK_THAT(r.body, Catch::Contains("chat.completion.chunk"));
  CHECK_THAT(r.body, Catch::Contains("data: {\"error\""));
  CHECK_THAT(r.body, Catch::Contains("px-crash"));
  CHECK_THAT(r.body, !Catch::Contains("[DONE]"));
}

// The backlog of the listening socket, from `ss` (its Send-Q column for a listener).
int ListenBacklog(int port) {
  std::string command = "ss -ltnH 'sport = :" + std::to_string(port) + "' 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  char state[64] = {0};
  int recv_q = -1, send_q = -1;
  int fields = std::fscanf(pipe, "%63s %d %d", state, &recv_q, &send_q);
  ::pclose(pipe);
  return fields == 3 ? send_q : -1;
}

TEST_CASE("a burst of concurrent clients is served without dropped connections",
          "[integration][proxy]") {
  int port = FreeLoopbackPort();
  auto swapd =
      StartSwapd("models:\n" + FakeModelYaml("px-burst", port, "", "    concurrencyLimit: 200\n"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  const int swapd_port = swapd.value().port;
  // cpp-httplib listens with a backlog of 5; swapd raises it so that bursts do not lose SYNs.
  CHECK(ListenBacklog(swapd_port) >= 128);

  REQUIRE(HttpPost(url, "/v1/completions", R"({"model":"px-burst","prompt":"a","max_tokens":1})",
                   "application/json", 60s)
              .status == 200);
  constexpr int kClients = 48;
  constexpr int kRequestsEach = 10;
  std::vector<std::future<std::vector<HttpReply>>> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.push_back(std::async(std::launch::async, [&url, c] {
      std::vector<HttpReply> replies;
      for (int i = 0; i < kRequestsEach; ++i) {
        json body = {
            {"model", "px-burst"}, {"prompt", "client " + std::to_string(c)}, {"max_tokens", 2}};
        replies.push_back(HttpPost(url, "/v1/completions", body.dump(), "application/json", 60s));
      }
      return replies;
    }));
  }
  int ok = 0;
  for (auto& client : clients) {
    for (const HttpReply& r : client.get()) {
      if (r.status == 200 && json::parse(r.body, nullptr, false).contains("choices")) {
        ++ok;
      } else {
        UNSCOPED_INFO("failed: " << r.Describe());
      }
    }
  }
  CHECK(ok == kClients * kRequestsEach);
}

TEST_CASE("--upstream-idle-timeout fails a backend that goes silent, before or mid-answer",
          "[integration][proxy]") {
  // One token every 5 s: longer than the 2 s idle timeout.
  const int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("idle-m", port, "--tokens-per-second 0.2"),
                          {"--upstream-idle-timeout", "2"});
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  // Not streamed: the fake answers after all its tokens, 15 s of silence.
  HttpReply whole =
      HttpPost(url, "/v1/chat/completions", ChatBody("idle-m", false, 3), "application/json", 60s);
  CHECK(whole.status == 502);
  CHECK_THAT(whole.body, Catch::Contains("the backend did not answer: nothing for 2 s "
                                         "(--upstream-idle-timeout)"));

  // Two at once: while more than one request is in flight, the wait for the backend's answer
  // happens in the front server's epoll set, where the same deadline ends it.
  auto post = [&] {
    return HttpPost(url, "/v1/chat/completions", ChatBody("idle-m", false, 3), "application/json",
                    60s);
  };
  std::future<HttpReply> first = std::async(std::launch::async, post);
  std::future<HttpReply> second = std::async(std::launch::async, post);
  for (std::future<HttpReply>* f : {&first, &second}) {
    HttpReply r = f->get();
    CHECK(r.status == 502);
    CHECK_THAT(r.body, Catch::Contains("the backend did not answer: nothing for 2 s"));
  }

  // Streamed: the first event comes at once, then nothing for 5 s.
  StreamedReply stream = StreamPost(url, "/v1/chat/completions", ChatBody("idle-m", true, 3));
  CHECK(stream.status == 200);
  CHECK_THAT(stream.body, Catch::Contains("\"role\":\"assistant\""));
  CHECK_THAT(stream.body, Catch::Contains("the backend's response stalled: nothing for 2 s"));

  // swapd and the backend are still fine for a request that asks for no tokens.
  CHECK(HttpGet(url, "/health").status == 200);
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("idle-m", false, 0), "application/json", 60s)
            .status == 200);
}

TEST_CASE("an https backend is reached over TLS, its certificate verified",
          "[integration][proxy]") {
  // The backend is `openssl s_server -WWW` (serves files of its directory, HTTP/1.0, the body
  // ends when the connection closes) with a certificate for "localhost" and 127.0.0.1 that swapd
  // is told to trust through SSL_CERT_FILE, as OpenSSL's default verify paths allow.
  char dir_template[] = "/tmp/swapd-tls-XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  const std::filesystem::path dir = dir_template;
  const std::string make_cert =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost"
      " -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout " +
      (dir / "key.pem").string() + " -out " + (dir / "cert.pem").string() + " >/dev/null 2>&1";
  REQUIRE(std::system(make_cert.c_str()) == 0);
  std::ofstream(dir / "health") << "ok\n";
  std::ofstream(dir / "hello.txt") << "hello over TLS\n";

  // Two models on the same backend command (the default group swaps one for the other): one
  // reached by name, one by IP address, each checked against the certificate's matching entry.
  const int port = FreeLoopbackPort();
  const std::string cmd =
      "sh -c \"cd " + dir.string() +
      " && exec openssl s_server -quiet -WWW -accept 127.0.0.1:" + std::to_string(port) +
      " -cert cert.pem -key key.pem\"";
  const std::string yaml =
      "models:\n"
      "  tls-m:\n"
      "    cmd: " +
      cmd +
      "\n"
      "    proxy: https://localhost:" +
      std::to_string(port) +
      "\n"
      "  tls-ip:\n"
      "    cmd: " +
      cmd +
      "\n"
      "    proxy: https://127.0.0.1:" +
      std::to_string(port) + "\n";
  auto swapd = StartSwapd(yaml, {}, {"SSL_CERT_FILE=" + (dir / "cert.pem").string()});
  REQUIRE(swapd.ok());
  INFO(swapd.value().process->Output());
  HttpReply r = HttpGet(swapd.value().base_url, "/upstream/tls-m/hello.txt", 60s);
  CHECK(r.status == 200);
  CHECK(r.body == "hello over TLS\n");
  // Once more: a body read until close leaves no connection to reuse, so this is a new one.
  CHECK(HttpGet(swapd.value().base_url, "/upstream/tls-m/health", 60s).body == "ok\n");
  r = HttpGet(swapd.value().base_url, "/upstream/tls-ip/hello.txt", 60s);
  CHECK(r.status == 200);
  CHECK(r.body == "hello over TLS\n");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace swapd::testing
