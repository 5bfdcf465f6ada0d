// Tests of Http1Server's threads over loopback with a raw socket client: an idle connection holds
// none, blocked handlers do not block the others, a deferred response holds none while it waits
// (or runs on a thread when its descriptor cannot join the epoll set), idle connections are
// closed, a stream waits for its source in poll (WaitReadable), Stop() ends Run() with
// connections open. The protocol itself: http1_server_test.cpp.
#include "http/http1_server.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

#include "http/request_context.h"
#include "tests/http/http1_test_server.h"
#include "tests/support/latch.h"
#include "tests/support/raw_connection.h"
#include "tests/support/wait.h"

namespace swapd {
namespace {

using namespace std::chrono_literals;
using testing::RawConnection;
using testing::WaitFor;
using Clock = std::chrono::steady_clock;
using testing::Echo;
using testing::JsonError;
using testing::Server;
using testing::ThreadCount;

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
