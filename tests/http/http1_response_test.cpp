// Unit tests of the HTTP/1.1 response reader the proxy uses on backend connections: heads,
// framing, and chunked bodies cut at every possible place.
#include "http/http1_response.h"

#include <catch2/catch.hpp>

#include <string_view>
#include <vector>

#include "http/http1_syntax.h"

namespace swapd {
namespace {

ResponseStart Parse(std::string_view head, bool head_request = false) {
  Result<ResponseStart> r = ParseResponseHead(head, head_request);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return r.value();
}

// The values of the fields named `name` (case-insensitive), in order.
std::vector<std::string_view> Values(const ResponseStart& r, std::string_view name) {
  std::vector<std::string_view> values;
  for (const HeaderField& field : r.headers) {
    if (EqualsIgnoreCase(field.name, name)) values.push_back(field.value);
  }
  return values;
}

// Feeds `wire` to a decoder in pieces of `step` bytes; returns the payload, and the bytes left
// over after the body in `rest`.
std::string Decode(BodyDecoder& decoder, std::string_view wire, size_t step, std::string& rest) {
  std::string payload;
  for (size_t at = 0; at < wire.size(); at += step) {
    std::string_view in = wire.substr(at, step);
    while (!in.empty() && !decoder.done() && !decoder.failed()) {
      std::string_view piece = decoder.Next(in);
      payload.append(piece);
    }
    if (decoder.done() || decoder.failed()) {
      rest = std::string(in) + std::string(wire.substr(std::min(wire.size(), at + step)));
      break;
    }
  }
  return payload;
}

TEST_CASE("the end of a response head is found once it has arrived", "[unit][proxy]") {
  CHECK(FindHeadEnd("HTTP/1.1 200 OK\r\nA: b\r\n") == std::string_view::npos);
  CHECK(FindHeadEnd("HTTP/1.1 200 OK\r\nA: b\r\n\r\nbody") == 25);
  CHECK(FindHeadEnd("HTTP/1.1 200 OK\nA: b\n\nbody") == 22);
}

TEST_CASE("a response head gives status, fields and framing", "[unit][proxy]") {
  ResponseStart r = Parse(
      "HTTP/1.1 200 OK\r\nContent-Type:  text/event-stream \r\nX-Multi: 1\r\nX-Multi: 2\r\n"
      "Content-Length: 12\r\n\r\n");
  CHECK(r.status == 200);
  CHECK(r.framing == BodyFraming::kLength);
  CHECK(r.content_length == 12);
  CHECK(r.keep_alive);
  CHECK(Values(r, "content-type") == std::vector<std::string_view>{"text/event-stream"});
  CHECK(Values(r, "X-Multi") == std::vector<std::string_view>{"1", "2"});  // in order

  // Transfer-Encoding wins over Content-Length.
  r = Parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n");
  CHECK(r.framing == BodyFraming::kChunked);
  // Neither: the body runs until the connection closes, which then cannot be reused.
  r = Parse("HTTP/1.1 200 OK\r\n\r\n");
  CHECK(r.framing == BodyFraming::kUntilClose);
  CHECK_FALSE(r.keep_alive);
  r = Parse("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
  CHECK_FALSE(r.keep_alive);
  r = Parse("HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\n");
  CHECK_FALSE(r.keep_alive);
  r = Parse("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 3\r\n\r\n");
  CHECK(r.keep_alive);
  // No body: HEAD, 204, 304, whatever the fields say.
  CHECK(Parse("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n", true).framing == BodyFraming::kNone);
  CHECK(Parse("HTTP/1.1 204 No Content\r\n\r\n").framing == BodyFraming::kNone);
  CHECK(Parse("HTTP/1.1 304 Not Modified\r\n\r\n").framing == BodyFraming::kNone);
  CHECK(Parse("HTTP/1.1 503\r\nContent-Length: 0\r\n\r\n").status == 503);
}

TEST_CASE("a malformed response head is an error that says what is wrong", "[unit][proxy]") {
  for (std::string_view bad :
       {"HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 20 OK\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n",
        "garbage\r\n\r\n", "HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
        "HTTP/1.1 200 OK\r\n folded: x\r\n\r\n", "HTTP/1.1 200 OK\r\nName : x\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"}) {
    Result<ResponseStart> r = ParseResponseHead(bad, false);
    INFO(bad);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::StartsWith("malformed HTTP response from the backend"));
  }
}

TEST_CASE("a chunked body decodes the same however the bytes are cut", "[unit][proxy]") {
  const std::string wire =
      "5;ext=1\r\nhello\r\n19\r\n data: {\"a\":1}\n\ndata: [DO\r\n3\r\nNE]\r\n0\r\n"
      "Trailer: x\r\n\r\nNEXT";
  for (size_t step = 1; step <= wire.size(); ++step) {
    BodyDecoder decoder(BodyFraming::kChunked, 0);
    std::string rest;
    INFO("step " << step);
    CHECK(Decode(decoder, wire, step, rest) == "hello data: {\"a\":1}\n\ndata: [DONE]");
    CHECK(decoder.done());
    CHECK(rest == "NEXT");  // the next response's bytes are left alone
  }
}

TEST_CASE("length and until-close bodies end where they should", "[unit][proxy]") {
  BodyDecoder length(BodyFraming::kLength, 5);
  std::string rest;
  CHECK(Decode(length,
               "hel"
               "loHTTP",
               3, rest) == "hello");
  CHECK(length.done());
  CHECK(rest == "HTTP");
  CHECK(BodyDecoder(BodyFraming::kLength, 0).done());
  CHECK(BodyDecoder(BodyFraming::kNone, 0).done());

  BodyDecoder until_close(BodyFraming::kUntilClose, 0);
  CHECK(Decode(until_close, "all of it", 4, rest) == "all of it");
  CHECK_FALSE(until_close.done());
  until_close.EndOfInput();
  CHECK(until_close.done());

  BodyDecoder cut(BodyFraming::kLength, 10);
  CHECK(Decode(cut, "short", 5, rest) == "short");
  cut.EndOfInput();
  CHECK(cut.failed());
  CHECK_THAT(cut.error(), Catch::Contains("closed before the body was complete"));
}

TEST_CASE("a malformed chunked body fails", "[unit][proxy]") {
  for (std::string_view bad :
       {"zz\r\nhello\r\n0\r\n\r\n", "\r\n", "3\r\nhello\r\n0\r\n\r\n", "10000000000000000\r\n"}) {
    BodyDecoder decoder(BodyFraming::kChunked, 0);
    std::string rest;
    Decode(decoder, bad, bad.size(), rest);
    INFO(bad);
    CHECK(decoder.failed());
    CHECK_THAT(decoder.error(), Catch::StartsWith("malformed HTTP response from the backend"));
  }
  BodyDecoder endless(BodyFraming::kChunked, 0);
  std::string rest;
  Decode(endless, std::string(9000, '1'), 100, rest);
  CHECK(endless.failed());
  BodyDecoder unfinished(BodyFraming::kChunked, 0);
  Decode(unfinished, "5\r\nhel", 6, rest);
  unfinished.EndOfInput();
  CHECK(unfinished.failed());
}

}  // namespace
}  // namespace swapd
