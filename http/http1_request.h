// The request side of HTTP/1.1 (RFC 9112) as the front door reads it from a client: the head
// (request line and header fields) with the body's framing, and the decoding of the target's
// path and query. Pure: no I/O; thread safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "http/http1_response.h"
#include "http/message.h"

namespace swapd {

struct RequestHead {
  std::string method;
  std::string target;     // as sent: path and query
  std::string path;       // the target's path, percent-decoded
  std::string query;      // the target's query, as sent (without the '?')
  int minor_version = 1;  // HTTP/1.x
  HttpHeaders headers;
  BodyFraming framing = BodyFraming::kNone;  // kNone, kLength or kChunked
  uint64_t content_length = 0;               // kLength only
  bool keep_alive = true;        // the client may send another request on this connection
  bool expect_continue = false;  // "Expect: 100-continue" from an HTTP/1.1 client
};

// Why a request head was refused, as the HTTP status to answer with and a message.
struct RequestError {
  int status = 400;
  std::string message;
};

// Parses a request head (request line, fields, the empty line), at most `max_fields` fields.
// False, with `error` set, for a head that is malformed (400), has too many fields (431) or
// asks for a transfer coding other than chunked (501).
bool ParseRequestHead(std::string_view head, size_t max_fields, RequestHead& out,
                      RequestError& error);

// Percent-decodes `s`; with `plus_is_space` (query strings), '+' is a space too. Malformed
// escapes are kept as they are.
std::string PercentDecode(std::string_view s, bool plus_is_space);

// The query's name=value pairs, decoded, in order.
std::vector<std::pair<std::string, std::string>> ParseQuery(std::string_view query);

}  // namespace swapd
