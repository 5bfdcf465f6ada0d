// Tests of UpstreamConnection and UpstreamClientPool against a scripted backend: a loopback
// listener on an ephemeral port whose one connection answers with fixed bytes, so that the
// cases a real llama-server rarely shows (closing an idle keep-alive connection, silence, stray
// bytes, refusal) happen on demand.
#include "http/upstream_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <future>
#include <thread>
#include <vector>

#include "http/upstream_client_pool.h"

namespace swapd {
namespace {

using namespace std::chrono_literals;

// A listening socket on 127.0.0.1 with an ephemeral port, its address in `addr`.
int LoopbackListener(int backlog, sockaddr_in& addr) {
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  REQUIRE(bind(listener, reinterpret_cast<sockaddr*>(&addr), len) == 0);
  REQUIRE(listen(listener, backlog) == 0);
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  return listener;
}

// A listener on 127.0.0.1:0 that accepts one connection, reads the request head, writes
// `answer`, then closes the connection (`close_after`) or keeps it open until destroyed.
class ScriptedBackend {
 public:
  ScriptedBackend(std::string answer, bool close_after) {
    sockaddr_in addr;
    listener_ = LoopbackListener(4, addr);
    port_ = ntohs(addr.sin_port);
    server_ = std::async(std::launch::async, [this, answer = std::move(answer), close_after] {
      int fd = accept(listener_, nullptr, nullptr);
      if (fd < 0) return std::string();
      std::string request;
      char buf[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        long n = read(fd, buf, sizeof buf);
        if (n <= 0) break;
        request.append(buf, static_cast<size_t>(n));
      }
      if (!answer.empty()) (void)!write(fd, answer.data(), answer.size());
      if (close_after) {
        close(fd);
      } else {
        connection_ = fd;
      }
      return request;
    });
  }
  ~ScriptedBackend() {
    shutdown(listener_, SHUT_RDWR);
    close(listener_);
    if (server_.valid()) server_.wait();
    if (connection_ >= 0) close(connection_);
  }
  ProxyUrl url() const { return ParseProxyUrl("http://127.0.0.1:" + std::to_string(port_)); }
  std::string request() { return server_.get(); }

 private:
  int listener_ = -1;
  int port_ = 0;
  int connection_ = -1;
  std::future<std::string> server_;
};

// A connection to `backend` (the test stops if it cannot be made); `failure` starts clear.
std::unique_ptr<UpstreamConnection> Connect(const ScriptedBackend& backend,
                                            UpstreamFailure& failure,
                                            UpstreamConnection::Timeouts timeouts = {}) {
  failure = {};
  auto c = UpstreamConnection::Open(backend.url(), timeouts, failure);
  INFO(failure.text);
  REQUIRE(c);
  return c;
}

// Sends a GET and reads the whole answer; returns the body.
std::string Exchange(UpstreamConnection& c, UpstreamFailure& failure) {
  ResponseStart start;
  std::string body;
  NoRequestContext ctx;
  if (!c.Send("GET /x HTTP/1.1\r\nHost: h\r\n\r\n", "", failure)) return body;
  if (!c.ReadHead(false, start, failure, ctx)) return body;
  for (bool done = false; !done;) {
    std::string_view piece;
    if (!c.ReadBody(piece, done, failure, ctx)) break;
    body.append(piece);
  }
  return body;
}

TEST_CASE("a connection the backend closed while idle is not reused", "[unit][proxy]") {
  ScriptedBackend backend("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true);
  UpstreamFailure failure;
  auto c = Connect(backend, failure);
  CHECK(Exchange(*c, failure) == "ok");
  CHECK(failure.ok());
  CHECK(c->Reusable());  // the answer kept the connection alive...
  CHECK_THAT(backend.request(), Catch::StartsWith("GET /x HTTP/1.1\r\n"));
  // ...but the backend has closed it since: the pool drops it instead of handing it out.
  UpstreamClientPool pool;
  pool.GiveBack(backend.url().origin, std::move(c));
  CHECK(pool.Take(backend.url().origin) == nullptr);
}

TEST_CASE("a kept-alive connection goes back to the pool and out again", "[unit][proxy]") {
  ScriptedBackend backend(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", false);
  UpstreamFailure failure;
  auto c = Connect(backend, failure);
  CHECK(Exchange(*c, failure) == "ok");
  UpstreamConnection* raw = c.get();
  UpstreamClientPool pool;
  pool.GiveBack(backend.url().origin, std::move(c));
  CHECK(pool.Take(backend.url().origin).get() == raw);
  CHECK(pool.Take(backend.url().origin) == nullptr);
}

TEST_CASE("idle connections of every origin expire, not only those of the next request's",
          "[unit][proxy]") {
  const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
  ScriptedBackend stopped(answer, false);
  ScriptedBackend running(answer, false);
  UpstreamFailure failure;
  auto a = Connect(stopped, failure);
  CHECK(Exchange(*a, failure) == "ok");
  auto b = Connect(running, failure);
  CHECK(Exchange(*b, failure) == "ok");
  UpstreamClientPool pool(std::chrono::milliseconds(50));
  const auto given_back = std::chrono::steady_clock::now();
  pool.GiveBack(stopped.url().origin, std::move(a));
  CHECK(pool.IdleCount() == 1);
  // Nothing asks for `stopped` again; a request to `running` ends after its idle time is over.
  while (std::chrono::steady_clock::now() - given_back <= 60ms) std::this_thread::sleep_for(5ms);
  pool.GiveBack(running.url().origin, std::move(b));
  CHECK(pool.IdleCount() == 1);
  CHECK(pool.Take(stopped.url().origin) == nullptr);
  CHECK(pool.Take(running.url().origin) != nullptr);
}

TEST_CASE("a connection given back with its own idle time keeps it", "[unit][proxy]") {
  const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
  ScriptedBackend kept(answer, false);
  ScriptedBackend dropped(answer, false);
  UpstreamFailure failure;
  auto a = Connect(kept, failure);
  CHECK(Exchange(*a, failure) == "ok");
  auto b = Connect(dropped, failure);
  CHECK(Exchange(*b, failure) == "ok");
  UpstreamClientPool pool(std::chrono::milliseconds(20));
  const auto given_back = std::chrono::steady_clock::now();
  pool.GiveBack(kept.url().origin, std::move(a), 0s);  // timeouts.idleConn 0: no limit
  pool.GiveBack(dropped.url().origin, std::move(b));   // the pool's 20 ms
  while (std::chrono::steady_clock::now() - given_back <= 40ms) std::this_thread::sleep_for(5ms);
  CHECK(pool.Take(dropped.url().origin) == nullptr);
  CHECK(pool.Take(kept.url().origin) != nullptr);
}

TEST_CASE("timeouts.responseHeader bounds the wait for the head, not for the body",
          "[unit][proxy]") {
  ScriptedBackend silent("", false);
  UpstreamConnection::Timeouts timeouts;
  timeouts.read = 60s;
  timeouts.response_header = 1s;
  CHECK(timeouts.HeadLimit() == 1s);
  UpstreamFailure failure;
  auto c = Connect(silent, failure, timeouts);
  const auto start = std::chrono::steady_clock::now();
  Exchange(*c, failure);
  CHECK(failure.kind == UpstreamFailure::Kind::kTimeout);
  CHECK(std::chrono::steady_clock::now() - start < 30s);  // not the 60 s read timeout
  timeouts.response_header = 0s;
  CHECK(timeouts.HeadLimit() == 60s);
}

TEST_CASE("stray bytes after an answer make its connection unusable", "[unit][proxy]") {
  ScriptedBackend backend("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokJUNK", false);
  UpstreamFailure failure;
  auto c = Connect(backend, failure);
  CHECK(Exchange(*c, failure) == "ok");
  CHECK_FALSE(c->Reusable());
}

TEST_CASE("refusal, silence and a cut answer are told apart", "[unit][proxy]") {
  UpstreamFailure failure;
  ProxyUrl nowhere;
  {
    ScriptedBackend closed("", true);
    nowhere = closed.url();
  }  // the port is free again: nothing listens
  CHECK(UpstreamConnection::Open(nowhere, {}, failure) == nullptr);
  CHECK(failure.kind == UpstreamFailure::Kind::kRefused);
  CHECK_THAT(failure.text, Catch::Contains("refused"));

  ScriptedBackend silent("", false);
  UpstreamConnection::Timeouts timeouts;
  timeouts.read = 1s;
  auto c = Connect(silent, failure, timeouts);
  Exchange(*c, failure);
  CHECK(failure.kind == UpstreamFailure::Kind::kTimeout);
  CHECK_FALSE(c->received_any());

  ScriptedBackend cut("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", true);
  c = Connect(cut, failure);
  CHECK(Exchange(*c, failure) == "short");
  CHECK(failure.kind == UpstreamFailure::Kind::kClosed);
  CHECK(c->received_any());

  ScriptedBackend garbage("SSH-2.0-OpenSSH\r\n\r\n", true);
  c = Connect(garbage, failure);
  Exchange(*c, failure);
  CHECK(failure.kind == UpstreamFailure::Kind::kMalformed);
  CHECK_THAT(failure.text, Catch::Contains("bad status line"));
}

TEST_CASE("a connect that never completes fails at the connect timeout", "[unit][proxy]") {
  // A listener that never accepts: once its accept queue is full, the kernel drops further SYNs
  // and a connect waits (retransmitting) as it would for a host that does not answer.
  sockaddr_in addr;
  const int listener = LoopbackListener(0, addr);
  std::vector<int> fillers;
  for (bool full = false; !full && fillers.size() < 16;) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    fillers.push_back(fd);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      full = poll(&p, 1, 500) == 0;  // the handshake did not complete: SYNs are dropped now
    }
  }
  const ProxyUrl url = ParseProxyUrl("http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)));
  UpstreamConnection::Timeouts timeouts;
  timeouts.connect = 1s;
  UpstreamFailure failure;
  const auto start = std::chrono::steady_clock::now();
  CHECK(UpstreamConnection::Open(url, timeouts, failure) == nullptr);
  CHECK(failure.kind == UpstreamFailure::Kind::kConnect);
  CHECK_THAT(failure.text, Catch::Contains("timed out"));
  // Bounded by the timeout (and not, say, by the kernel's SYN retries of about two minutes).
  CHECK(std::chrono::steady_clock::now() - start < 60s);
  for (int fd : fillers) close(fd);
  close(listener);
}

}  // namespace
}  // namespace swapd
