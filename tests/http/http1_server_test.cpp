// Tests of Http1Server and ClientConnection over loopback with a raw socket client, so that the
// wire is exactly what a test writes and reads: keep-alive and pipelining, request bodies
// (length, chunked, 100-continue), HTTP/1.0, HEAD, streamed answers and clients that leave,
// refused requests, a handler that throws. Its threads: http1_server_threads_test.cpp.
#include "http/http1_server.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "http/request_context.h"
#include "tests/http/http1_test_server.h"
#include "tests/support/raw_connection.h"
#include "tests/support/wait.h"

namespace swapd {
namespace {

using namespace std::chrono_literals;
using testing::Echo;
using testing::JsonError;
using testing::RawConnection;
using testing::Server;
using testing::ThreadCount;
using testing::WaitFor;

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

TEST_CASE("what a response keeps until written is released after the client has the answer",
          "[unit][http1]") {
  // The kept object's release waits until the client has read the answer: released before the
  // write, it would wait in vain (the answer is not sent until it returns) and say so.
  std::mutex mu;
  std::condition_variable cv;
  bool answer_read = false;
  std::atomic<int> released{0};
  std::atomic<bool> released_after_read{false};
  auto keep = [&](const HttpRequest&, HttpResponse& res, RequestContext&) {
    res.SetBody("answer", "text/plain");
    res.keep_until_written = std::shared_ptr<const void>(new int(0), [&](const int* p) {
      delete p;
      std::unique_lock lock(mu);
      released_after_read = cv.wait_for(lock, 20s, [&] { return answer_read; });
      ++released;
    });
  };
  Server server(keep);
  RawConnection c(server.port());
  REQUIRE(c.Send("GET / HTTP/1.1\r\n\r\n"));
  CHECK(c.ReadUntil("answer").rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  {
    std::lock_guard lock(mu);
    answer_read = true;
  }
  cv.notify_all();
  REQUIRE(WaitFor([&] { return released.load() == 1; }, 30s));
  CHECK(released_after_read);
  // The connection serves its next request once the release is done.
  REQUIRE(c.Send("GET / HTTP/1.1\r\n\r\n"));
  CHECK(c.ReadUntil("answer").rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  REQUIRE(WaitFor([&] { return released.load() == 2; }, 30s));
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

}  // namespace
}  // namespace swapd
