// Unit tests of what crosses the proxy: the request head sent to a backend and the response
// headers passed back.
#include "frontdoor/proxy_message.h"

#include <catch2/catch.hpp>

#include <string>
#include <utility>

namespace swapd {
namespace {

TEST_CASE("the request head carries the client's end-to-end fields to the backend",
          "[unit][proxy]") {
  HttpHeaders headers;
  for (auto [name, value] : {std::pair{"Content-Type", "application/json"},
                             {"Authorization", "Bearer k"},
                             {"Connection", "keep-alive, Upgrade"},
                             {"Host", "swapd:8080"},
                             {"Content-Length", "999"},
                             {"Expect", "100-continue"},
                             {"REMOTE_ADDR", "127.0.0.1"},
                             {"Transfer-Encoding", "chunked"}}) {
    headers.Add(name, value);
  }
  ProxyRequest request;
  request.method = "POST";
  request.target = "/v1/chat/completions?x=1";
  request.headers = &headers;
  request.body = R"({"model":"m"})";
  ProxyUrl url = ParseProxyUrl("http://127.0.0.1:5800/api/");
  const std::string head = UpstreamRequestHead(url, request);
  CHECK_THAT(head, Catch::StartsWith("POST /api/v1/chat/completions?x=1 HTTP/1.1\r\n"
                                     "Host: 127.0.0.1:5800\r\n"));
  CHECK_THAT(head, Catch::Contains("\r\nContent-Type: application/json\r\n"));
  CHECK_THAT(head, Catch::Contains("\r\nAuthorization: Bearer k\r\n"));
  CHECK_THAT(head, Catch::EndsWith("\r\nContent-Length: 13\r\n\r\n"));
  for (const char* gone : {"Connection", "swapd:8080", "999", "Expect", "REMOTE_ADDR", "chunked"}) {
    CHECK_THAT(head, !Catch::Contains(gone));
  }

  // A GET has no body and no Content-Length; an https URL without a port names only the host.
  request.method = "GET";
  request.body = {};
  request.headers = nullptr;
  CHECK(UpstreamRequestHead(ParseProxyUrl("https://api.example.org/v1"), request) ==
        "GET /v1/v1/chat/completions?x=1 HTTP/1.1\r\nHost: api.example.org\r\n\r\n");
}

}  // namespace
}  // namespace swapd
