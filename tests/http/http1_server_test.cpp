// Tests of Http1Server and ClientConnection over loopback with a raw socket client, so that the
// wire is exactly what a test writes and reads: keep-alive and pipelining, request bodies
// (length, chunked, 100-continue), HTTP/1.0, HEAD, streamed answers and clients that leave,
// refused requests, and the threads: an idle connection holds none, blocked handlers do not block
// the others, a deferred response holds none while it waits, a stream waits for its source in
// poll (WaitReadable), Stop() ends Run() with connections open.
#include "http/http1_server.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "http/request_context.h"
#include "tests/support/latch.h"
#include "tests/support/raw_connection.h"
#include "tests/support/wait.h"

namespace swapd {
namespace {

using namespace std::chrono_literals;
using testing::RawConnection;
using testing::WaitFor;
using Clock = std::chrono::steady_clock;

// An Http1Server on an ephemeral loopback port, running on its own thread.
class Server {
 public:
  explicit Server(Http1Server::Handler handler, Http1ServerSettings settings = {})
      : server_(settings, std::move(handler)) {
    REQUIRE(server_.Bind("127.0.0.1", 0).ok());
    REQUIRE(server_.port() > 0);
    thread_ = std::thread([this] { server_.Run(); });
  }
  ~Server() { Stop(); }
  void Stop() {
    server_.Stop();
    if (thread_.joinable()) thread_.join();
  }
  int port() const { return server_.port(); }
  int threads() const { return server_.threads(); }

 private:
  Http1Server server_;
  std::thread thread_;
};

// Echoes what the handler saw: method, path, the "q" parameter and the body.
void Echo(const HttpRequest& req, HttpResponse& res, RequestContext&) {
  std::string q(req.Param("q").value_or(""));
  res.SetBody(req.method + " " + req.path + " q=" + q + " body=" + req.body, "text/plain");
}

// An application's ErrorRenderer: the server answers refused requests with what it makes.
void JsonError(HttpResponse& res, int status, std::string_view message) {
  res.status = status;
  res.SetBody("{\"error\":{\"message\":\"" + std::string(message) + "\"}}", "application/json");
}

int ThreadCount() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

TEST_CASE("keep-alive, pipelining, request bodies and query parameters", "[unit][http1]") {
  Server server(Echo);
  RawConnection c(server.port());
  REQUIRE(c.connected());
  REQUIRE(c.Send("GET /a%20b?q=x+y HTTP/1.1\r\nHost: h\r\n\r\n"));
  std::string first = c.ReadUntil("body=");
  CHECK(first.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(first.find("Content-Length: 20\r\n") != std::string::npos);
  CHECK(first.find("GET /a b q=x y body=") != std::string::npos);

  // Two requests in one write, one with a chunked body: two answers, in order.
  REQUIRE(
      c.Send("POST /one HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloPOST /two HTTP/1.1\r\n"
             "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\n\r\n"));
  CHECK(c.ReadUntil("body=hello").find("POST /one q= body=hello") != std::string::npos);
  CHECK(c.ReadUntil("body=abcde").find("POST /two q= body=abcde") != std::string::npos);

  // A request that arrives in pieces is put together.
  REQUIRE(c.Send("POST /slow HTTP/1.1\r\nContent-Le"));
  REQUIRE(c.Send("ngth: 3\r\n\r\nx"));
  REQUIRE(c.Send("yz"));
  CHECK(c.ReadUntil("body=xyz").find("POST /slow q= body=xyz") != std::string::npos);
  CHECK_FALSE(c.eof());
}

TEST_CASE("Expect: 100-continue, HTTP/1.0 and HEAD", "[unit][http1]") {
  Server server(Echo);
  {
    RawConnection c(server.port());
    REQUIRE(c.Send("POST /e HTTP/1.1\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n"));
    CHECK(c.ReadUntil("\r\n\r\n") == "HTTP/1.1 100 Continue\r\n\r\n");
    REQUIRE(c.Send("ok"));
    CHECK(c.ReadUntil("body=ok").find("200 OK") != std::string::npos);
  }
  {  // An HTTP/1.0 client does not know 100 Continue: it gets the answer only.
    RawConnection c(server.port());
    REQUIRE(c.Send("POST /e HTTP/1.0\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\nok"));
    std::string all = c.ReadToEnd();
    CHECK(all.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
    CHECK(all.find("100 Continue") == std::string::npos);
    CHECK(all.find("body=ok") != std::string::npos);
  }
  {  // HTTP/1.0 without keep-alive: the answer, then the server closes.
    RawConnection c(server.port());
    REQUIRE(c.Send("GET /old HTTP/1.0\r\n\r\n"));
    std::string all = c.ReadToEnd();
    CHECK(all.find("Connection: close\r\n") != std::string::npos);
    CHECK(all.find("GET /old q= body=") != std::string::npos);
    CHECK(c.eof());
  }
  {  // HEAD: the length of the body it would get, no body.
    RawConnection c(server.port());
    REQUIRE(c.Send("HEAD /h HTTP/1.1\r\n\r\nGET /after HTTP/1.1\r\n\r\n"));
    std::string head = c.ReadUntil("\r\n\r\n");
    CHECK(head.find("Content-Length: 16\r\n") != std::string::npos);  // "HEAD /h q= body="
    CHECK(c.ReadUntil("body=").rfind("HTTP/1.1 200 OK", 0) == 0);     // the next answer follows
  }
}

TEST_CASE("a streamed answer is chunked; a client that leaves ends it", "[unit][http1]") {
  std::atomic<int> released{-1};  // the releaser's "success", once called
  std::atomic<bool> forever{false};
  Server server([&](const HttpRequest& req, HttpResponse& res, RequestContext&) {
    auto count = std::make_shared<int>(0);
    const bool endless = req.path == "/endless";
    res.SetStream(
        "text/event-stream",
        [count, endless](BodyWriter& out, RequestContext&) {
          if (!endless && *count == 3) {
            out.End();
            return true;
          }
          return out.Write("data: " + std::to_string((*count)++) + "\n\n");
        },
        [&released, endless](bool success) {
          if (endless) released = success ? 1 : 0;
        });
    forever = endless;
  });
  {
    RawConnection c(server.port());
    REQUIRE(c.Send("GET /three HTTP/1.1\r\n\r\n"));
    std::string all = c.ReadUntil("0\r\n\r\n");
    CHECK(all.find("Transfer-Encoding: chunked\r\n") != std::string::npos);
    CHECK(all.find("Content-Type: text/event-stream\r\n") != std::string::npos);
    CHECK(
        all.find("\r\n\r\n9\r\ndata: 0\n\n\r\n9\r\ndata: 1\n\n\r\n9\r\ndata: 2\n\n\r\n0\r\n\r\n") !=
        std::string::npos);
  }
  {  // To HTTP/1.0 the body goes unframed and the connection closes at its end.
    RawConnection c(server.port());
    REQUIRE(c.Send("GET /three HTTP/1.0\r\n\r\n"));
    std::string all = c.ReadToEnd();
    CHECK(all.find("Transfer-Encoding") == std::string::npos);
    CHECK(all.find("\r\n\r\ndata: 0\n\ndata: 1\n\ndata: 2\n\n") != std::string::npos);
  }
  {
    RawConnection c(server.port());
    REQUIRE(c.Send("GET /endless HTTP/1.1\r\n\r\n"));
    CHECK(c.ReadUntil("data: 5").find("data: 5") != std::string::npos);
    c.Close();
    CHECK(WaitFor([&] { return released != -1; }));
    CHECK(released == 0);
  }
}

TEST_CASE("refused requests get the renderer's error and the connection closes", "[unit][http1]") {
  Http1ServerSettings settings;
  settings.limits.render_error = JsonError;
  settings.limits.max_body_bytes = 10;
  settings.limits.max_header_fields = 4;
  Server server(Echo, settings);
  struct Case {
    std::string request;
    std::string status;
  };
  const Case cases[] = {
      {"NOT A REQUEST\r\n\r\n", "400 Bad Request"},
      {"POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n01234567890", "413 Payload Too Large"},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nb\r\n01234567890\r\n0\r\n\r\n",
       "413 Payload Too Large"},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "400 Bad Request"},
      {"GET / HTTP/1.1\r\nA: 1\r\nB: 1\r\nC: 1\r\nD: 1\r\nE: 1\r\n\r\n",
       "431 Request Header Fields Too Large"},
      {"GET / HTTP/1.1\r\nX: " + std::string(70000, 'x') + "\r\n\r\n",
       "431 Request Header Fields Too Large"},
      {"GET / HTTP/3\r\n\r\n", "505 HTTP Version Not Supported"},
  };
  for (const Case& k : cases) {
    RawConnection c(server.port());
    c.Send(k.request);  // the server may hang up before reading all of it
    std::string all = c.ReadToEnd();
    INFO(k.request.substr(0, 80) << " -> " << all.substr(0, 300));
    CHECK(all.rfind("HTTP/1.1 " + k.status + "\r\n", 0) == 0);
    CHECK(all.find("Connection: close\r\n") != std::string::npos);
    CHECK(all.find("{\"error\":{") != std::string::npos);
    CHECK(c.eof());
  }
  // The server still serves.
  RawConnection ok(server.port());
  REQUIRE(ok.Send("GET /fine HTTP/1.1\r\n\r\n"));
  CHECK(ok.ReadUntil("body=").find("200 OK") != std::string::npos);
}

TEST_CASE("a refused client that keeps sending holds no thread", "[unit][http1]") {
  Http1ServerSettings settings;
  settings.limits.render_error = JsonError;
  settings.limits.max_body_bytes = 10;
  Server server(Echo, settings);
  RawConnection warm(server.port());
  REQUIRE(warm.Send("GET /warm HTTP/1.1\r\n\r\n"));
  REQUIRE(warm.ReadUntil("body=").find("200 OK") != std::string::npos);
  const int threads_before = ThreadCount();
  // Each announces a body too large and sends part of it; the answer comes at once, and the
  // connection stays open while the client may still send (what it sends is dropped).
  std::vector<std::unique_ptr<RawConnection>> refused;
  for (int i = 0; i < 50; ++i) {
    refused.push_back(std::make_unique<RawConnection>(server.port()));
    REQUIRE(refused.back()->Send("POST /big HTTP/1.1\r\nContent-Length: 100000\r\n\r\n" +
                                 std::string(1000, 'x')));
    REQUIRE(refused.back()->ReadUntil("}}").find("413 Payload Too Large") != std::string::npos);
  }
  for (auto& c : refused) CHECK(c->Send(std::string(5000, 'y')));
  RawConnection other(server.port());
  REQUIRE(other.Send("GET /other HTTP/1.1\r\n\r\n"));
  CHECK(other.ReadUntil("body=").find("200 OK") != std::string::npos);
  const int threads_after = ThreadCount();
  INFO("threads " << threads_before << " -> " << threads_after);
  CHECK(threads_after - threads_before < 10);
  // The client's own close ends the connection; until then it has only the server's end.
  for (auto& c : refused) {
    CHECK(c->ReadToEnd().empty());
    CHECK(c->eof());
  }
}

TEST_CASE("a handler that throws gives 500 with the renderer's error", "[unit][http1]") {
  auto boom = [](const HttpRequest&, HttpResponse& res, RequestContext&) {
    res.SetStream("text/plain", [](BodyWriter&, RequestContext&) { return false; });
    throw std::runtime_error("boom");
  };
  Http1ServerSettings settings;
  settings.limits.render_error = JsonError;
  Server json(boom, settings);
  RawConnection c(json.port());
  REQUIRE(c.Send("GET / HTTP/1.1\r\n\r\n"));
  std::string head = c.ReadUntil("\r\n\r\n");
  CHECK(head.rfind("HTTP/1.1 500 Internal Server Error\r\n", 0) == 0);
  CHECK(head.find("Content-Type: application/json\r\n") != std::string::npos);
  CHECK(c.ReadUntil("}}").find("internal error: boom") != std::string::npos);
  // Without one: plain text.
  Server plain(boom);
  RawConnection p(plain.port());
  REQUIRE(p.Send("GET / HTTP/1.1\r\n\r\n"));
  std::string answer = p.ReadUntil("boom\n");
  CHECK(answer.find("Content-Type: text/plain") != std::string::npos);
  CHECK(answer.find("internal error: boom") != std::string::npos);
}

// Counts the handlers that have started; waits until enough have. Thread safe.
class Arrivals {
 public:
  void Arrive() {
    std::lock_guard lock(mu_);
    ++count_;
    cv_.notify_all();
  }
  bool WaitFor(int n, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return count_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int count_ = 0;
};

TEST_CASE("idle connections hold no thread; blocked handlers block no one else", "[unit][http1]") {
  // Said: the handler calls RequestContext::WillBlock and the server adds a thread at once. Unsaid:
  // the server's watchdog notices that no thread is left for the other connections.
  const std::string path = GENERATE(std::string("/block"), std::string("/say-and-block"));
  testing::Latch release;
  Arrivals entered;
  Server server([&](const HttpRequest& req, HttpResponse& res, RequestContext& ctx) {
    if (req.path == "/block" || req.path == "/say-and-block") {
      if (req.path == "/say-and-block") ctx.WillBlock();
      entered.Arrive();
      release.Wait(60s);
    }
    res.SetBody("done " + req.path, "text/plain");
  });
  RawConnection warm(server.port());
  REQUIRE(warm.Send("GET /warm HTTP/1.1\r\n\r\n"));
  REQUIRE(warm.ReadUntil("done /warm").find("200 OK") != std::string::npos);
  const int threads_before = ThreadCount();
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 200; ++i) {
    idle.push_back(std::make_unique<RawConnection>(server.port()));
    REQUIRE(idle.back()->connected());
  }
  // More blocked handlers than the server has threads at first.
  constexpr int kBlocked = 6;
  std::vector<std::unique_ptr<RawConnection>> blocked;
  for (int i = 0; i < kBlocked; ++i) {
    blocked.push_back(std::make_unique<RawConnection>(server.port()));
    REQUIRE(blocked.back()->Send("GET " + path + " HTTP/1.1\r\n\r\n"));
  }
  REQUIRE(entered.WaitFor(kBlocked, 20s));
  RawConnection other(server.port());
  REQUIRE(other.Send("GET /other HTTP/1.1\r\n\r\n"));
  CHECK(other.ReadUntil("done /other").find("200 OK") != std::string::npos);
  const int threads_blocked = ThreadCount();
  INFO("threads " << threads_before << " -> " << threads_blocked);
  CHECK(threads_blocked - threads_before < kBlocked + 10);
  release.Raise();
  for (auto& c : blocked) CHECK(c->ReadUntil("done " + path).find("200 OK") != std::string::npos);
  // The idle connections still work.
  REQUIRE(idle.front()->Send("GET /late HTTP/1.1\r\n\r\n"));
  CHECK(idle.front()->ReadUntil("done /late").find("200 OK") != std::string::npos);
  // The threads added for the blocked handlers end once they are no longer needed (those that
  // went back to wait, after 30 s idle).
  CHECK(WaitFor([&] { return server.threads() <= EpollThreads::kInitialThreads; }, 45s));
}

TEST_CASE("a deferred response waits in the epoll set, step by step, or until its deadline",
          "[unit][http1]") {
  int pipe_fds[2];
  REQUIRE(pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) == 0);
  const int readable = pipe_fds[0];
  // Used by one server thread at a time (the server hands a deferred response on under a lock).
  bool in_set = false;
  std::string text;
  auto wait = 20s;
  std::function<DeferredStep()> next_step = [&]() -> DeferredStep {
    return {readable, &in_set, Clock::now() + wait,
            [&](HttpResponse& res, WaitEnd end, RequestContext&) -> DeferredStep {
              if (end == WaitEnd::kTimedOut) {
                res.SetBody("timed out with \"" + std::exchange(text, "") + "\"", "text/plain");
                return {};
              }
              char buf[64];
              const long n = read(readable, buf, sizeof buf);
              if (n > 0) text.append(buf, static_cast<size_t>(n));
              // Waits again until a whole line has come.
              if (text.empty() || text.back() != '\n') return next_step();
              res.SetBody("got " + std::exchange(text, ""), "text/plain");
              return {};
            }};
  };
  Server server([&](const HttpRequest& req, HttpResponse& res, RequestContext& ctx) {
    if (req.path == "/quick") {
      res.SetBody("quick", "text/plain");
      return;
    }
    wait = req.path == "/short" ? 1s : 20s;
    ctx.Defer(next_step());
  });
  auto write_pipe = [&](const std::string& bytes) {
    return write(pipe_fds[1], bytes.data(), bytes.size()) == static_cast<long>(bytes.size());
  };
  RawConnection deferred(server.port());
  REQUIRE(deferred.Send("GET /defer HTTP/1.1\r\n\r\n"));
  REQUIRE(write_pipe("ab"));
  // Meanwhile another connection is served.
  RawConnection other(server.port());
  REQUIRE(other.Send("GET /quick HTTP/1.1\r\n\r\n"));
  CHECK(other.ReadUntil("quick").find("200 OK") != std::string::npos);
  REQUIRE(write_pipe("c\n"));
  CHECK(deferred.ReadUntil("got abc\n").find("200 OK") != std::string::npos);

  REQUIRE(deferred.Send("GET /short HTTP/1.1\r\n\r\n"));
  CHECK(deferred.ReadUntil("timed out with \"\"").find("200 OK") != std::string::npos);

  // The pipe stayed in the epoll set through the timed-out wait; the next one re-arms it.
  REQUIRE(deferred.Send("GET /defer HTTP/1.1\r\n\r\n"));
  REQUIRE(write_pipe("d\n"));
  CHECK(deferred.ReadUntil("got d\n").find("200 OK") != std::string::npos);
  server.Stop();
  close(pipe_fds[0]);
  close(pipe_fds[1]);
}

TEST_CASE("a deferred step whose descriptor cannot join the epoll set runs on a thread",
          "[unit][http1]") {
  // epoll refuses a regular file (EPERM), as it could refuse a socket when out of memory.
  char path[] = "/tmp/swapd-http1-test-XXXXXX";
  const int file = mkstemp(path);
  REQUIRE(file >= 0);
  unlink(path);
  Server server([&](const HttpRequest&, HttpResponse&, RequestContext& ctx) {
    ctx.Defer({file, nullptr, Clock::now() + 1h,
               [](HttpResponse& res, WaitEnd end, RequestContext& step_ctx) -> DeferredStep {
                 res.SetBody(std::string("timed_out=") +
                                 (end == WaitEnd::kTimedOut ? "yes" : "no") +
                                 " may_defer=" + (step_ctx.ShouldDefer() ? "yes" : "no"),
                             "text/plain");
                 return {};
               }});
  });
  RawConnection c(server.port());
  REQUIRE(c.Send("GET / HTTP/1.1\r\n\r\n"));
  // Run at once, not as timed out (its deadline is an hour away), and it may not defer again.
  CHECK(c.ReadUntil("timed_out=no may_defer=no").find("200 OK") != std::string::npos);
  server.Stop();
  close(file);
}

TEST_CASE("an idle connection is closed after the idle timeout", "[unit][http1]") {
  Http1ServerSettings settings;
  settings.idle_timeout = 1s;
  Server server(Echo, settings);
  RawConnection c(server.port());
  REQUIRE(c.Send("GET / HTTP/1.1\r\n\r\n"));
  REQUIRE(c.ReadUntil("body=").find("200 OK") != std::string::npos);
  c.ReadToEnd();  // returns when the server closes (well within its 20 s)
  CHECK(c.eof());
}

// An eventfd a test makes readable.
class Signal {
 public:
  Signal() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) { REQUIRE(fd_ >= 0); }
  ~Signal() { ::close(fd_); }
  int fd() const { return fd_; }
  void Raise() {
    uint64_t one = 1;
    REQUIRE(::write(fd_, &one, sizeof(one)) == sizeof(one));
  }
  void Lower() {
    uint64_t value;
    [[maybe_unused]] ssize_t n = ::read(fd_, &value, sizeof(value));
  }

 private:
  const int fd_;
};

TEST_CASE("a stream's WaitReadable ends with its source, its client's leaving, or the stop",
          "[unit][http1]") {
  Signal source;
  std::atomic<int> entered{0};    // WaitReadable calls begun
  std::atomic<int> waits{0};      // of those, ended
  std::atomic<int> readable{0};   // of those, because the source was readable
  std::atomic<int> released{-1};  // the stream's "whole", once it is done with
  auto server =
      std::make_unique<Server>([&](const HttpRequest&, HttpResponse& res, RequestContext&) {
        res.SetStream(
            "text/plain",
            [&](BodyWriter& out, RequestContext& context) {
              // A long timeout: only the source, the client or the stop ends the wait.
              ++entered;
              const bool ready = context.WaitReadable(source.fd(), std::chrono::minutes(10));
              ++waits;
              if (!ready) return true;  // the server then looks at its client and its stop
              ++readable;
              source.Lower();
              return out.Write("tick\n");
            },
            [&](bool whole) { released = whole ? 1 : 0; });
      });
  {
    RawConnection c(server->port());
    REQUIRE(c.Send("GET / HTTP/1.1\r\n\r\n"));
    source.Raise();
    CHECK(c.ReadUntil("tick").find("tick") != std::string::npos);
    source.Raise();
    CHECK(c.ReadUntil("5\r\ntick").find("5\r\ntick") != std::string::npos);
    CHECK(readable == 2);
    c.Close();  // the wait ends without the source
    CHECK(WaitFor([&] { return released != -1; }));
    CHECK(released == 0);
    CHECK(readable == 2);
  }
  released = -1;
  RawConnection streaming(server->port());
  REQUIRE(streaming.Send("GET / HTTP/1.1\r\n\r\n"));
  source.Raise();
  REQUIRE(streaming.ReadUntil("tick").find("tick") != std::string::npos);
  // Stopped while the stream waits in poll (not between two pieces: that ends it too).
  REQUIRE(WaitFor([&] { return entered > waits; }));
  server->Stop();  // joins Run(): the wait ended
  CHECK(waits == entered);
  CHECK(released == 0);
  streaming.ReadToEnd();
  CHECK(streaming.eof());
}

TEST_CASE("Stop ends Run with idle connections and a stream open", "[unit][http1]") {
  auto server =
      std::make_unique<Server>([](const HttpRequest&, HttpResponse& res, RequestContext&) {
        res.SetStream("text/plain", [](BodyWriter& out, RequestContext&) {
          std::this_thread::sleep_for(5ms);  // a slow producer, not synchronization
          return out.Write("x");
        });
      });
  RawConnection idle(server->port());
  RawConnection streaming(server->port());
  REQUIRE(streaming.Send("GET / HTTP/1.1\r\n\r\n"));
  REQUIRE(streaming.ReadUntil("\r\n1\r\nx").find("200 OK") != std::string::npos);
  server->Stop();  // joins Run()
  streaming.ReadToEnd();
  CHECK(streaming.eof());
  idle.ReadToEnd();
  CHECK(idle.eof());
}

}  // namespace
}  // namespace swapd
