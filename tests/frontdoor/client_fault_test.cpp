// Fault-injection integration tests of clients that misbehave: hang-ups while queued or while
// the model loads, a reader that takes one byte at a time, malformed and oversized requests,
// slowloris, a flood of headers. The real swapd, real fake backends, raw loopback sockets. Each
// case checks the defined outcome and that swapd still answers /health and serves a healthy model
// afterwards.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "tests/support/fault_checks.h"
#include "tests/support/http_wait.h"
#include "tests/support/latch.h"
#include "tests/support/raw_connection.h"
#include "tests/support/swapd_process.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
// Each condition waited for costs an HTTP request or a scan of /proc: looked at every 20 ms.
constexpr auto kPoll = 20ms;

json ApiModels(const std::string& url) {
  HttpReply r = HttpGet(url, "/api/models");
  if (r.status != 200) return json::array();
  return json::parse(r.body, nullptr, false).value("models", json::array());
}

// /api/models shows no request in flight or queued for any model.
bool NothingPending(const std::string& url) {
  HttpReply r = HttpGet(url, "/api/models");
  if (r.status != 200) return false;
  json doc = json::parse(r.body, nullptr, false);
  if (!doc.is_object()) return false;
  for (const json& m : doc["models"]) {
    if (m["in_flight"] != 0 || m["queued"] != 0) return false;
  }
  return true;
}

long RssKib(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

TEST_CASE("a client that hangs up while queued behind a swap leaves a clean queue",
          "[integration][faults]") {
  const int port_a = FreeLoopbackPort(), port_b = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("q-a", port_a, "--tokens-per-second 20") +
                          FakeModelYaml("q-b", port_b));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  Latch first_chunk;
  auto a = std::async(std::launch::async, [&] {
    return StreamPost(url, "/v1/chat/completions", ChatBody("q-a", true, 100),
                      [&](const std::string&) {
                        first_chunk.Raise();
                        return true;
                      });
  });
  REQUIRE(first_chunk.Wait(60s));
  {
    RawConnection queued(swapd.value().port);
    REQUIRE(queued.connected());
    REQUIRE(queued.Send(RawPost("/v1/chat/completions", ChatBody("q-b", false))));
    const bool seen = WaitFor(
        [&] {
          for (const json& m : ApiModels(url)) {
            if (m["id"] == "q-b" && m["queued"] == 1) return true;
          }
          return false;
        },
        10s, kPoll);
    INFO(ApiModels(url).dump());
    CHECK(seen);
  }  // hangs up while queued
  StreamedReply a_reply = a.get();
  CHECK(a_reply.status == 200);
  CHECK_THAT(a_reply.body, Catch::Contains("[DONE]"));
  CHECK(WaitFor([&] { return NothingPending(url); }, 30s, kPoll));
  ExpectHealthy(url, "q-b");
  ExpectHealthy(url, "q-a");
  CHECK(WaitFor([&] { return NothingPending(url); }, 10s, kPoll));
}

TEST_CASE("a client that hangs up while its model loads leaves a clean queue",
          "[integration][faults]") {
  auto swapd =
      StartSwapd("models:\n" + FakeModelYaml("load-m", FreeLoopbackPort(), "--load-ms 3000"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  {
    RawConnection loading(swapd.value().port);
    REQUIRE(loading.connected());
    REQUIRE(loading.Send(RawPost("/v1/chat/completions", ChatBody("load-m", false))));
    const bool starting = WaitFor(
        [&] {
          for (const json& m : ApiModels(url)) {
            if (m["id"] == "load-m" && m["state"] == "starting") return true;
          }
          return false;
        },
        10s, kPoll);
    INFO(ApiModels(url).dump());
    CHECK(starting);
  }  // hangs up while loading
  CHECK(WaitFor([&] { return NothingPending(url); }, 30s, kPoll));
  ExpectHealthy(url, "load-m");
  CHECK(WaitFor([&] { return NothingPending(url); }, 10s, kPoll));
}

TEST_CASE("a client reading one byte at a time blocks nobody and grows no memory",
          "[integration][faults]") {
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("slow-m", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  const int swapd_pid = swapd.value().process->pid();
  INFO(swapd.value().process->Output());
  ExpectHealthy(url, "slow-m");
  const long rss_before = RssKib(swapd_pid);
  REQUIRE(rss_before > 0);

  // ~300000 events (tens of MB) that the client reads a byte at a time.
  RawConnection slow(swapd.value().port, 1024);
  REQUIRE(slow.connected());
  REQUIRE(slow.Send(RawPost("/v1/chat/completions", ChatBody("slow-m", true, 300000))));
  std::string got = slow.Read(1, 30s);
  REQUIRE(got.size() == 1);
  std::thread reader([&] {
    for (int i = 0; i < 10; ++i) {
      std::this_thread::sleep_for(500ms);  // the slow client's pace, not synchronization
      got += slow.Read(1, 5s);
    }
  });
  for (int i = 0; i < 3; ++i) {
    const auto start = Clock::now();
    CHECK(HttpGet(url, "/health", 10s).status == 200);
    CHECK(Clock::now() - start < 2s);
    const auto chat_start = Clock::now();
    HttpReply r =
        HttpPost(url, "/v1/chat/completions", ChatBody("slow-m", false), "application/json", 30s);
    CHECK(r.status == 200);
    CHECK(Clock::now() - chat_start < 10s);
  }
  reader.join();
  const long rss_after = RssKib(swapd_pid);
  INFO("swapd VmRSS " << rss_before << " KiB -> " << rss_after << " KiB; read " << got.size());
  CHECK(got.rfind("HTTP/1.1 2", 0) == 0);
  CHECK(rss_after - rss_before < 50 * 1024);
  slow.Close();
  CHECK(WaitFor([&] { return NothingPending(url); }, 30s, kPoll));
  ExpectHealthy(url, "slow-m");
}

TEST_CASE("malformed, oversized and slowloris requests get 4xx and swapd stays healthy",
          "[integration][faults]") {
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("mf-m", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  const int port = swapd.value().port;
  INFO(swapd.value().process->Output());

  struct Case {
    const char* what;
    std::string path;
    std::string body;
    std::string content_type;
  };
  const std::string multipart_type = "multipart/form-data; boundary=XyZ";
  const Case cases[] = {
      {"invalid UTF-8", "/v1/chat/completions",
       "{\"model\":\"mf-m\xff\xfe\",\"messages\":[{\"role\":\"user\",\"content\":\"\xc3\"}]}",
       "application/json"},
      {"model is a number", "/v1/chat/completions", R"({"model":42,"messages":[]})",
       "application/json"},
      {"truncated multipart", "/v1/audio/transcriptions",
       "--XyZ\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nmf-m\r\n--XyZ\r\n"
       "Content-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n\r\nRIFF",
       multipart_type},
  };
  for (const Case& c : cases) {
    HttpReply r = HttpPost(url, c.path, c.body, c.content_type, 60s);
    INFO(c.what << ": " << r.Describe());
    CHECK(r.status >= 400);
    CHECK(r.status < 500);
  }

  {  // One byte over the 256 MiB body limit: cpp-httplib reads (and drops) the whole body, then
     // answers 413. A body that stops short gets no answer at all, so all of it is sent.
    constexpr size_t kOverLimit = (256u << 20) + 1;
    RawConnection huge(port);
    REQUIRE(huge.connected());
    huge.Send(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
        "application/json\r\nContent-Length: " +
        std::to_string(kOverLimit) + "\r\n\r\n");
    const std::string block(1 << 20, ' ');
    for (size_t sent = 0; sent < kOverLimit;) {
      const size_t n = std::min(block.size(), kOverLimit - sent);
      if (!huge.Send(block.substr(0, n))) break;  // swapd may answer and hang up early
      sent += n;
    }
    std::string head = huge.ReadUntil("\r\n\r\n", 30s);
    INFO("huge body: " << head);
    CHECK(RawStatus(head) == 413);
  }
  {  // Slowloris: one header byte per 100 ms must not hold up anyone else.
    RawConnection slowloris(port);
    REQUIRE(slowloris.connected());
    std::atomic<bool> stop{false};
    std::thread dribble([&] {
      const std::string partial =
          "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow-Header: aaaaaaaaaaaa";
      for (size_t i = 0; i < partial.size() && !stop; ++i) {
        if (!slowloris.Send(partial.substr(i, 1))) break;
        std::this_thread::sleep_for(100ms);  // the attacker's pace, not synchronization
      }
    });
    for (int i = 0; i < 5; ++i) {
      const auto start = Clock::now();
      CHECK(HttpGet(url, "/health", 10s).status == 200);
      CHECK(HttpGet(url, "/v1/models", 10s).status == 200);
      CHECK(Clock::now() - start < 2s);
      std::this_thread::sleep_for(200ms);  // spread the probes over the dribble
    }
    stop = true;
    dribble.join();
  }
  ExpectHealthy(url, "mf-m");
}

// A non-boolean "stream" would be read as false by llama-server; cpp-httplib 0.11 bounds header
// lines, not their number: swapd refuses both itself.
TEST_CASE("a non-boolean stream and a flood of 10000 headers get 4xx", "[integration][faults]") {
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("mt-m", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  HttpReply r =
      HttpPost(url, "/v1/chat/completions",
               R"({"model":"mt-m","stream":"yes","messages":[{"role":"user","content":"hi"}]})",
               "application/json", 60s);
  INFO("stream is a string: " << r.Describe());
  CHECK(r.status >= 400);
  CHECK(r.status < 500);

  RawConnection flood(swapd.value().port);
  REQUIRE(flood.connected());
  std::string request = "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (int i = 0; i < 10000; ++i) request += "X-Flood-" + std::to_string(i) + ": v\r\n";
  request += "\r\n";
  flood.Send(request);  // swapd may hang up before it has read everything
  std::string head = flood.ReadUntil("\r\n\r\n", 30s);
  INFO("header flood: " << head.substr(0, 200));
  const int status = RawStatus(head);
  CHECK((status == -1 || (status >= 400 && status < 500)));
  flood.Close();
  ExpectHealthy(url, "mt-m");
}

}  // namespace
}  // namespace swapd::testing
