// Fault-injection integration tests: the real swapd in front of fake backends that misbehave
// (garbage instead of HTTP, silent hang-ups, refused connections, stalls, stuck or failing cmdStop,
// a port already taken) and clients that misbehave (hang-ups while queued or loading, slow readers,
// malformed and oversized requests, slowloris). Each case checks the defined outcome and that swapd
// still answers /health and serves a healthy model afterwards.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>
#include <functional>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "tests/support/fake_backend_process.h"
#include "tests/support/http_wait.h"
#include "tests/support/latch.h"
#include "tests/support/swapd_process.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string ErrorMessage(const std::string& body) {
  auto doc = json::parse(body, nullptr, false);
  if (!doc.is_object() || !doc.contains("error") || !doc["error"].is_object() ||
      !doc["error"].contains("message") || !doc["error"]["message"].is_string()) {
    return "";
  }
  return doc["error"]["message"].get<std::string>();
}

int PortOf(const std::string& base_url) {
  return std::stoi(base_url.substr(base_url.rfind(':') + 1));
}

// A raw TCP connection to swapd, for what an HTTP client library will not send.
class RawConnection {
 public:
  explicit RawConnection(int port, int receive_buffer = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (receive_buffer > 0) {
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof(receive_buffer));
    }
    sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~RawConnection() { Close(); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }
  bool Send(const std::string& data) {
    size_t sent = 0;
    while (sent < data.size()) {
      ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }
  // Reads up to `max` bytes, waiting at most `timeout`. Empty on timeout, EOF or error.
  std::string Read(size_t max, std::chrono::milliseconds timeout) {
    pollfd p = {fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return "";
    std::string buffer(max, '\0');
    ssize_t n = ::recv(fd_, buffer.data(), max, 0);
    buffer.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return buffer;
  }
  // Reads until the end of the response headers, EOF or the deadline; returns what came.
  std::string ReadHead(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    std::string head;
    while (head.find("\r\n\r\n") == std::string::npos && Clock::now() < deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      std::string chunk = Read(4096, left);
      if (chunk.empty()) break;
      head += chunk;
    }
    return head;
  }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

// The status code of a raw "HTTP/1.1 NNN ..." answer, or -1.
int RawStatus(const std::string& head) {
  if (head.rfind("HTTP/1.", 0) != 0 || head.size() < 12) return -1;
  return std::atoi(head.c_str() + 9);
}

std::string RawPost(const std::string& path, const std::string& body,
                    const std::string& content_type = "application/json") {
  return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: " + content_type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

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

bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds deadline) {
  const auto end = Clock::now() + deadline;
  while (Clock::now() < end) {
    if (condition()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return condition();
}

long RssKib(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

// swapd answers /health and serves `model` (which may need a swap) normally.
void ExpectHealthy(const std::string& url, const std::string& model) {
  const auto start = Clock::now();
  HttpReply health = HttpGet(url, "/health", 10s);
  CHECK(health.status == 200);
  CHECK(Clock::now() - start < 5s);
  HttpReply r =
      HttpPost(url, "/v1/chat/completions", ChatBody(model, false), "application/json", 60s);
  INFO("healthy model " << model << ": " << r.Describe());
  CHECK(r.status == 200);
}

// A model whose backend answers model routes with a connection fault, next to a healthy one.
void CheckConnectionFault(const std::string& id, const std::string& flag) {
  const int port = FreeLoopbackPort(), healthy_port = FreeLoopbackPort();
  auto swapd =
      StartSwapd("models:\n" + FakeModelYaml(id, port, flag) + FakeModelYaml("ok-m", healthy_port));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  HttpReply r = HttpPost(url, "/v1/chat/completions", ChatBody(id, false), "application/json", 60s);
  INFO(r.Describe());
  CHECK(r.status == 502);
  CHECK_THAT(r.content_type, Catch::Contains("application/json"));
  CHECK_FALSE(ErrorMessage(r.body).empty());

  StreamedReply s = StreamPost(url, "/v1/chat/completions", ChatBody(id, true));
  INFO("streamed: " << s.status << " " << s.body << " " << s.error);
  CHECK(s.status == 502);
  CHECK_FALSE(ErrorMessage(s.body).empty());

  ExpectHealthy(url, "ok-m");
}

TEST_CASE("a backend that answers garbage instead of HTTP gives 502 JSON",
          "[integration][faults]") {
  CheckConnectionFault("garbage-m", "--garbage-response");
}

TEST_CASE("a backend that closes without a response gives 502 JSON", "[integration][faults]") {
  CheckConnectionFault("close-m", "--close-without-response");
}

TEST_CASE("a ready backend that refuses connections gives 502 JSON at once",
          "[integration][faults]") {
  // The backend listens on one port, the proxy URL names another where nothing listens, and
  // checkEndpoint: none makes it "ready" as soon as it is spawned.
  const int backend_port = FreeLoopbackPort(), dead_port = FreeLoopbackPort();
  const std::string yaml =
      "models:\n  \"refuse-m\":\n    cmd: " FAKE_BACKEND_BINARY " --port " +
      std::to_string(backend_port) +
      " --model refuse-m\n    proxy: http://127.0.0.1:" + std::to_string(dead_port) +
      "\n    checkEndpoint: none\n" + FakeModelYaml("ok-m", FreeLoopbackPort());
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  const auto start = Clock::now();
  HttpReply r =
      HttpPost(url, "/v1/chat/completions", ChatBody("refuse-m", false), "application/json", 60s);
  const auto took = Clock::now() - start;
  INFO(r.Describe() << " after "
                    << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                    << " ms");
  CHECK(r.status == 502);
  CHECK_THAT(ErrorMessage(r.body),
             Catch::Contains("refuse-m") && Catch::Contains("could not reach the backend"));
  CHECK(took < 20s);
  ExpectHealthy(url, "ok-m");
}

TEST_CASE("a backend that hangs mid-stream is cut by --upstream-idle-timeout",
          "[integration][faults]") {
  const int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("hang-m", port, "--hang-mid-stream 3") +
                              FakeModelYaml("ok-m", FreeLoopbackPort()),
                          {"--upstream-idle-timeout", "2"});
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  const auto start = Clock::now();
  StreamedReply s = StreamPost(url, "/v1/chat/completions", ChatBody("hang-m", true, 8));
  INFO(s.body << " " << s.error);
  CHECK(s.status == 200);
  CHECK_THAT(s.body, Catch::Contains("\"role\":\"assistant\""));
  CHECK_THAT(s.body, Catch::Contains("stalled"));
  CHECK_THAT(s.body, !Catch::Contains("[DONE]"));
  CHECK(Clock::now() - start < 30s);
  ExpectHealthy(url, "ok-m");
}

// A model whose cmdStop is `stop_cmd`, then a swap to another model.
void CheckStopCommandFault(const std::string& id, const std::string& stop_cmd,
                           const std::string& leftover_needle) {
  const std::string extra = "    cmdStop: " + stop_cmd + "\n    unloadTimeout: 1\n";
  auto swapd = StartSwapd("models:\n" + FakeModelYaml(id, FreeLoopbackPort(), "", extra) +
                          FakeModelYaml("ok-m", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  REQUIRE(
      HttpPost(url, "/v1/chat/completions", ChatBody(id, false), "application/json", 60s).status ==
      200);
  REQUIRE_FALSE(PidsWithArg("--model " + id).empty());
  const auto start = Clock::now();
  ExpectHealthy(url, "ok-m");  // the swap stops `id` first
  CHECK(Clock::now() - start < 30s);
  CHECK(WaitFor([&] { return PidsWithArg("--model " + id).empty(); }, 20s));
  if (!leftover_needle.empty()) {
    INFO("cmdStop process still running: " << leftover_needle);
    CHECK(WaitFor([&] { return PidsWithArg(leftover_needle).empty(); }, 20s));
  }
}

TEST_CASE("a cmdStop that hangs: the model is still killed and the swap completes",
          "[integration][faults]") {
  CheckStopCommandFault("stophang-m", "sleep 587.25", "sleep 587.25");
}

TEST_CASE("a cmdStop that fails: the model is still stopped and the swap completes",
          "[integration][faults]") {
  CheckStopCommandFault("stopfail-m", "\"false\"", "");
}

// swapd checks the proxy's local port before it spawns: a process already listening there would
// answer the readiness probe and the requests in place of the backend.
TEST_CASE("a backend port already taken: 502 naming the bind failure, no impostor",
          "[integration][faults]") {
  auto impostor = StartFakeBackend({"--model", "impostor"});
  REQUIRE(impostor.ok());
  const int port = impostor.value().port;
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("taken-m", port) +
                          FakeModelYaml("ok-m", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  HttpReply r =
      HttpPost(url, "/v1/chat/completions", ChatBody("taken-m", false), "application/json", 60s);
  INFO(r.Describe());
  CHECK(r.status == 502);
  CHECK_THAT(ErrorMessage(r.body), Catch::Contains("bind"));
  HttpReply stats = HttpGet(impostor.value().base_url, "/stats");
  INFO("impostor: " << stats.Describe());
  CHECK(json::parse(stats.body, nullptr, false).value("requests", -1) == 0);
  ExpectHealthy(url, "ok-m");
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
    RawConnection queued(PortOf(url));
    REQUIRE(queued.connected());
    REQUIRE(queued.Send(RawPost("/v1/chat/completions", ChatBody("q-b", false))));
    const bool seen = WaitFor(
        [&] {
          for (const json& m : ApiModels(url)) {
            if (m["id"] == "q-b" && m["queued"] == 1) return true;
          }
          return false;
        },
        10s);
    INFO(ApiModels(url).dump());
    CHECK(seen);
  }  // hangs up while queued
  StreamedReply a_reply = a.get();
  CHECK(a_reply.status == 200);
  CHECK_THAT(a_reply.body, Catch::Contains("[DONE]"));
  CHECK(WaitFor([&] { return NothingPending(url); }, 30s));
  ExpectHealthy(url, "q-b");
  ExpectHealthy(url, "q-a");
  CHECK(WaitFor([&] { return NothingPending(url); }, 10s));
}

TEST_CASE("a client that hangs up while its model loads leaves a clean queue",
          "[integration][faults]") {
  auto swapd =
      StartSwapd("models:\n" + FakeModelYaml("load-m", FreeLoopbackPort(), "--load-ms 3000"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  {
    RawConnection loading(PortOf(url));
    REQUIRE(loading.connected());
    REQUIRE(loading.Send(RawPost("/v1/chat/completions", ChatBody("load-m", false))));
    const bool starting = WaitFor(
        [&] {
          for (const json& m : ApiModels(url)) {
            if (m["id"] == "load-m" && m["state"] == "starting") return true;
          }
          return false;
        },
        10s);
    INFO(ApiModels(url).dump());
    CHECK(starting);
  }  // hangs up while loading
  CHECK(WaitFor([&] { return NothingPending(url); }, 30s));
  ExpectHealthy(url, "load-m");
  CHECK(WaitFor([&] { return NothingPending(url); }, 10s));
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
  RawConnection slow(PortOf(url), 1024);
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
  CHECK(WaitFor([&] { return NothingPending(url); }, 30s));
  ExpectHealthy(url, "slow-m");
}

TEST_CASE("malformed, oversized and slowloris requests get 4xx and swapd stays healthy",
          "[integration][faults]") {
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("mf-m", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  const int port = PortOf(url);
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
    std::string head = huge.ReadHead(30s);
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

  RawConnection flood(PortOf(url));
  REQUIRE(flood.connected());
  std::string request = "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (int i = 0; i < 10000; ++i) request += "X-Flood-" + std::to_string(i) + ": v\r\n";
  request += "\r\n";
  flood.Send(request);  // swapd may hang up before it has read everything
  std::string head = flood.ReadHead(30s);
  INFO("header flood: " << head.substr(0, 200));
  const int status = RawStatus(head);
  CHECK((status == -1 || (status >= 400 && status < 500)));
  flood.Close();
  ExpectHealthy(url, "mt-m");
}

}  // namespace
}  // namespace swapd::testing
