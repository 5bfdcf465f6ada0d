// Tests of HttpClient, swapd's one-shot HTTP client, against the fake llama-server on a loopback
// port: the request as the server saw it, the whole answer, a stream read piece by piece as it
// arrives, the two ways to stop, and the failures told apart.
#include "http/http_client.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <vector>

#include "backends/port_check.h"
#include "tests/support/fake_backend_process.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using Kind = UpstreamFailure::Kind;

// A fake that has finished loading: on a loaded machine a request sent as soon as it listens
// would get its 503 "Loading model".
FakeBackend Start(const std::vector<std::string>& args) {
  Result<FakeBackend> started = StartFakeBackend(args);
  INFO(started.status().ToString());
  REQUIRE(started.ok());
  REQUIRE(WaitUntilLoaded(started.value()));
  return std::move(started).value();
}

HttpClient ClientOf(const std::string& url, std::chrono::seconds read = 60s) {
  UpstreamConnection::Timeouts timeouts;
  timeouts.connect = 5s;
  timeouts.read = read;
  return HttpClient(ParseProxyUrl(url), timeouts);
}

// GET `target` from the fake (its test routes); the JSON body.
json GetJson(const FakeBackend& fake, const std::string& target) {
  ClientRequest request;
  request.target = target;
  ClientResponse response;
  UpstreamFailure failure;
  const bool ok = ClientOf(fake.base_url).Fetch(request, response, failure);
  INFO(failure.text);
  REQUIRE(ok);
  REQUIRE(response.status == 200);
  return json::parse(response.body, nullptr, false);
}

ClientRequest StreamedChat(int tokens) {
  ClientRequest request;
  request.method = "POST";
  request.target = "/v1/chat/completions";
  request.headers.Add("Content-Type", "application/json");
  request.body = json{{"model", "m"},
                      {"stream", true},
                      {"max_tokens", tokens},
                      {"messages", {{{"role", "user"}, {"content", "hello"}}}}}
                     .dump();
  return request;
}

TEST_CASE("HttpClient sends the request as asked and reads the whole answer",
          "[integration][http1][client]") {
  FakeBackend fake = Start({"-m", "m"});

  SECTION("the URL's path prefix goes before the target") {
    ClientRequest request;
    request.target = "/models";
    ClientResponse response;
    UpstreamFailure failure;
    REQUIRE(ClientOf(fake.base_url + "/v1").Fetch(request, response, failure));
    CHECK(failure.ok());
    CHECK(response.status == 200);
    CHECK_THAT(std::string(response.headers.Get("content-type")),
               Catch::StartsWith("application/json"));
    const json list = json::parse(response.body, nullptr, false);
    REQUIRE(list.is_object());
    CHECK(list["data"][0]["id"] == "m");
    CHECK(GetJson(fake, "/last-request")["path"] == "/v1/models");
  }

  SECTION("method, query, headers and body arrive as sent; the connection is not kept") {
    ClientRequest request;
    request.method = "POST";
    request.target = "/v1/chat/completions?trace=1";
    request.headers.Add("Content-Type", "application/json");
    request.headers.Add("X-Swapd-Test", "yes");
    request.headers.Add("Content-Length", "999");  // the client's own: ignored
    request.body = R"({"model":"m","messages":[{"role":"user","content":"hi"}]})";
    ClientResponse response;
    UpstreamFailure failure;
    REQUIRE(ClientOf(fake.base_url).Fetch(request, response, failure));
    CHECK(response.status == 200);
    CHECK(json::parse(response.body, nullptr, false).contains("choices"));
    const json seen = GetJson(fake, "/last-request");
    CHECK(seen["method"] == "POST");
    CHECK(seen["path"] == "/v1/chat/completions");
    CHECK(seen["query"] == "trace=1");
    CHECK(seen["headers"]["x-swapd-test"] == "yes");
    CHECK(seen["headers"]["connection"] == "close");
    CHECK(seen["headers"]["content-length"] == std::to_string(request.body.size()));
    CHECK(seen["headers"]["host"] == "127.0.0.1:" + std::to_string(fake.port));
    CHECK(seen["body"] == request.body);
  }

  SECTION("an error status is an answer like any other") {
    ClientRequest request;
    request.target = "/fail?status=418";
    ClientResponse response;
    UpstreamFailure failure;
    REQUIRE(ClientOf(fake.base_url).Fetch(request, response, failure));
    CHECK(response.status == 418);
    CHECK(response.body == "fake: failing on purpose with 418");
  }
}

TEST_CASE("HttpClient hands a stream over piece by piece as it arrives",
          "[integration][http1][client]") {
  // 10 tokens at 20 per second: the events leave the fake over half a second.
  FakeBackend fake = Start({"-m", "m", "--tokens-per-second", "20"});
  int status = 0;
  std::string content_type;
  std::string body;
  std::vector<Clock::time_point> arrivals;
  bool head_first = false;
  UpstreamFailure failure;
  const bool whole = ClientOf(fake.base_url)
                         .Stream(
                             StreamedChat(10),
                             [&](const ClientResponse& head) {
                               status = head.status;
                               content_type = head.headers.Get("Content-Type");
                               head_first = arrivals.empty();
                               return true;
                             },
                             [&](std::string_view piece) {
                               arrivals.push_back(Clock::now());
                               body.append(piece);
                               return true;
                             },
                             failure);
  INFO(failure.text);
  REQUIRE(whole);
  CHECK(head_first);
  CHECK(status == 200);
  CHECK_THAT(content_type, Catch::StartsWith("text/event-stream"));
  CHECK_THAT(body, Catch::Contains("\"finish_reason\"") && Catch::EndsWith("data: [DONE]\n\n"));
  // Not gathered first and handed over at the end: the first piece came long before the last.
  REQUIRE(arrivals.size() >= 3);
  CHECK(arrivals.back() - arrivals.front() >= 300ms);
}

TEST_CASE("HttpClient stops when a handler says so or the stop flag is set",
          "[integration][http1][client]") {
  // The stream goes silent after its third event, and stays open.
  FakeBackend fake = Start({"-m", "m", "--hang-mid-stream", "3"});
  auto cancelled_streams = [&] { return GetJson(fake, "/stats").value("cancelled_streams", -1); };
  HttpClient client = ClientOf(fake.base_url);
  UpstreamFailure failure;

  SECTION("a handler's false ends the exchange and closes the connection") {
    int pieces = 0;
    CHECK_FALSE(client.Stream(
        StreamedChat(10), nullptr,
        [&](std::string_view) {
          ++pieces;
          return false;
        },
        failure));
    CHECK(pieces == 1);
    CHECK(failure.kind == Kind::kClientGone);
    CHECK(failure.text == "cancelled");
    CHECK(WaitFor([&] { return cancelled_streams() == 1; }, 10s));
  }

  SECTION("the stop flag ends the wait for a silent server within about a second") {
    std::atomic<bool> stop{false};
    client.set_stop(&stop);
    int pieces = 0;
    const auto began = Clock::now();
    CHECK_FALSE(client.Stream(
        StreamedChat(10), nullptr,
        [&](std::string_view) {
          ++pieces;
          stop = true;  // from here on, the client waits for the flag
          return true;
        },
        failure));
    CHECK(pieces >= 1);
    CHECK(failure.kind == Kind::kClientGone);
    CHECK(failure.text == "stopped");
    CHECK(Clock::now() - began < 10s);  // the read timeout is a minute
    CHECK(WaitFor([&] { return cancelled_streams() == 1; }, 10s));
    // Set before a call, the flag stops it at once.
    ClientResponse response;
    CHECK_FALSE(client.Fetch(ClientRequest{}, response, failure));
    CHECK(failure.text == "stopped");
  }
}

TEST_CASE("HttpClient's failures without a server say what went wrong", "[unit][http1][client]") {
  ClientRequest get;
  ClientResponse response;
  UpstreamFailure failure;

  SECTION("nothing listens") {
    const int port = FreeLoopbackPort();
    REQUIRE(port > 0);
    CHECK_FALSE(ClientOf("http://127.0.0.1:" + std::to_string(port)).Fetch(get, response, failure));
    CHECK(failure.kind == Kind::kRefused);
    CHECK(failure.text == "Connection refused (127.0.0.1:" + std::to_string(port) + ")");
  }

  SECTION("not a URL the client can use") {
    CHECK_FALSE(ClientOf("ftp://127.0.0.1:21").Fetch(get, response, failure));
    CHECK(failure.kind == Kind::kConnect);
    CHECK_THAT(failure.text, Catch::Contains("not an http:// or https:// URL"));
  }
}

TEST_CASE("HttpClient's failures with a server say what went wrong",
          "[integration][http1][client]") {
  FakeBackend fake = Start({"-m", "m", "--garbage-response"});
  ClientRequest get;
  ClientResponse response;
  UpstreamFailure failure;

  SECTION("silence beyond the read timeout") {
    get.target = "/slow?ms=20000";
    const auto began = Clock::now();
    CHECK_FALSE(ClientOf(fake.base_url, 1s).Fetch(get, response, failure));
    CHECK(failure.kind == Kind::kTimeout);
    CHECK(failure.text == "read timed out");
    CHECK(Clock::now() - began < 10s);
  }

  SECTION("an answer that is not HTTP") {
    CHECK_FALSE(ClientOf(fake.base_url).Fetch(StreamedChat(3), response, failure));
    CHECK(failure.kind == Kind::kMalformed);
    CHECK_FALSE(failure.text.empty());
  }

  SECTION("a body over the limit") {
    get.target = "/v1/models";
    HttpClient client = ClientOf(fake.base_url);
    client.set_max_body(10);
    CHECK_FALSE(client.Fetch(get, response, failure));
    CHECK(failure.kind == Kind::kMalformed);
    CHECK(failure.text == "the answer's body is larger than 10 bytes");
    CHECK(response.status == 200);
  }
}

}  // namespace
}  // namespace swapd::testing
