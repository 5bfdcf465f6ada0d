// Unit tests of the request side of HTTP/1.1 (http/http1_request.h) and of the multipart form
// scan (frontdoor/multipart.h).
#include "http/http1_request.h"

#include <catch2/catch.hpp>

#include <algorithm>

namespace swapd {
namespace {

RequestHead Parsed(std::string_view head) {
  RequestHead out;
  RequestError error;
  INFO(head);
  REQUIRE(ParseRequestHead(head, 256, out, error));
  return out;
}

RequestError Refused(std::string_view head, size_t max_fields = 256) {
  RequestHead out;
  RequestError error;
  INFO(head);
  REQUIRE_FALSE(ParseRequestHead(head, max_fields, out, error));
  return error;
}

TEST_CASE("a request head: line, fields, decoded path and raw query", "[unit][http1]") {
  RequestHead h = Parsed(
      "POST /upstream/a%2Fb/x?model=m%201&q HTTP/1.1\r\nHost: h\r\nX-Two:  spaced  \r\n"
      "Content-Length: 5\r\n\r\n");
  CHECK(h.method == "POST");
  CHECK(h.target == "/upstream/a%2Fb/x?model=m%201&q");
  CHECK(h.path == "/upstream/a/b/x");
  CHECK(h.query == "model=m%201&q");
  CHECK(h.minor_version == 1);
  CHECK(h.headers.size() == 3);
  CHECK(h.headers.Get("x-two") == "spaced");  // names are case-insensitive
  CHECK(h.framing == BodyFraming::kLength);
  CHECK(h.content_length == 5);
  CHECK(h.keep_alive);
  CHECK_FALSE(h.expect_continue);
}

TEST_CASE("a request body's framing and the connection's persistence", "[unit][http1]") {
  CHECK(Parsed("GET / HTTP/1.1\r\n\r\n").framing == BodyFraming::kNone);
  CHECK(Parsed("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n").framing == BodyFraming::kNone);
  CHECK(Parsed("POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n").framing ==
        BodyFraming::kChunked);
  CHECK(Parsed("POST / HTTP/1.1\r\nExpect: 100-continue\r\n\r\n").expect_continue);
  CHECK_FALSE(Parsed("POST / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n").expect_continue);
  // LF alone ends lines too.
  CHECK(Parsed("GET /x HTTP/1.1\nHost: h\n\n").headers.size() == 1);

  CHECK_FALSE(Parsed("GET / HTTP/1.1\r\nConnection: close\r\n\r\n").keep_alive);
  CHECK_FALSE(Parsed("GET / HTTP/1.0\r\n\r\n").keep_alive);
  RequestHead old = Parsed("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n");
  CHECK(old.keep_alive);
  CHECK(old.minor_version == 0);
}

TEST_CASE("request heads that are refused, with the status to answer", "[unit][http1]") {
  CHECK(Refused("GET /\r\n\r\n").status == 400);
  CHECK(Refused("GET  / HTTP/1.1\r\n\r\n").status == 400);
  CHECK(Refused("GET http://h/ HTTP/1.1\r\n\r\n").status == 400);
  CHECK(Refused("G(T / HTTP/1.1\r\n\r\n").status == 400);
  CHECK(Refused("GET /a\x01 HTTP/1.1\r\n\r\n").status == 400);
  CHECK(Refused("GET / HTTP/2.0\r\n\r\n").status == 505);
  CHECK(Refused("GET / FTP/1.0\r\n\r\n").status == 400);
  CHECK(Refused("GET / HTTP/1.1\r\nNo colon\r\n\r\n").status == 400);
  CHECK(Refused("GET / HTTP/1.1\r\n folded: x\r\n\r\n").status == 400);
  CHECK(Refused("GET / HTTP/1.1\r\nName : x\r\n\r\n").status == 400);
  CHECK(Refused("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n").status == 400);
  CHECK(Refused("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n").status == 400);
  CHECK(Refused("POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n")
            .status == 400);
  CHECK(Refused("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n").status == 501);
  RequestError many = Refused("GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", 2);
  CHECK(many.status == 431);
  CHECK(many.message.find("at most 2") != std::string::npos);
  // The same Content-Length twice is allowed.
  CHECK(
      Parsed("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n").content_length ==
      3);
}

TEST_CASE("percent-decoding and query parameters", "[unit][http1]") {
  CHECK(PercentDecode("a%20b%2fc+d", false) == "a b/c+d");
  CHECK(PercentDecode("a%20b+c", true) == "a b c");
  CHECK(PercentDecode("%zz%4", false) == "%zz%4");  // malformed escapes stay as they are
  HttpRequest req;
  req.params = ParseQuery("model=qwen%2F7b&&no-history&x=1+2&x=3");
  CHECK(req.params.size() == 4);
  CHECK(req.Param("model") == "qwen/7b");
  CHECK(req.Param("no-history") == "");
  CHECK_FALSE(req.Param("none").has_value());
  CHECK(std::count_if(req.params.begin(), req.params.end(),
                      [](const auto& p) { return p.first == "x"; }) == 2);
  CHECK(req.Param("x") == "1 2");  // the first of two
}

}  // namespace
}  // namespace swapd
