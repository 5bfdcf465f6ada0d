// The response side of HTTP/1.1 (RFC 9112) as the upstream proxy reads it from a backend: the
// head (status line and header fields) and the body's framing (none, Content-Length, chunked, or
// until the connection closes), decoded piece by piece without copying. Pure: no I/O; a
// BodyDecoder is used by one thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace swapd {

enum class BodyFraming {
  kNone,        // HEAD, 1xx, 204, 304: no body
  kLength,      // Content-Length
  kChunked,     // Transfer-Encoding: chunked
  kUntilClose,  // neither: the body ends when the backend closes the connection
};

// One header field of a response head, pointing into the bytes of that head.
struct HeaderField {
  std::string_view name;
  std::string_view value;
};

struct ResponseStart {
  int status = 0;
  // In the order received. They point into the head that was parsed, so they are valid only as
  // long as its bytes are (in UpstreamConnection: until it reads again).
  std::vector<HeaderField> headers;
  BodyFraming framing = BodyFraming::kNone;
  bool has_length = false;      // the head declares a Content-Length
  uint64_t content_length = 0;  // its value (the body's length when framing is kLength)
  bool keep_alive = true;       // the connection may carry another request after this one
};

// Where the head in `bytes` ends (just past the empty line), or npos while it is incomplete.
size_t FindHeadEnd(std::string_view bytes);

// Parses a response head (status line, fields, the empty line). `head_request`: the request was
// HEAD, so no body follows whatever the fields say.
Result<ResponseStart> ParseResponseHead(std::string_view head, bool head_request);

// Decodes a body's framing. Feed it the bytes read from the connection; it hands back the
// payload in pieces that point into those bytes.
class BodyDecoder {
 public:
  BodyDecoder() = default;
  BodyDecoder(BodyFraming framing, uint64_t content_length);

  // The next piece of payload at the front of `in`, consuming it (and any framing before it)
  // from `in`. Empty when `in` holds no more payload: all of it consumed as framing, the body
  // complete (done()) or malformed (failed()).
  std::string_view Next(std::string_view& in);

  // The connection closed: completes a kUntilClose body; any other unfinished body fails.
  void EndOfInput();

  bool done() const { return state_ == State::kDone; }
  bool failed() const { return state_ == State::kFailed; }
  const std::string& error() const { return error_; }

 private:
  enum class State { kData, kChunkSize, kChunkDataEnd, kTrailers, kDone, kFailed };
  std::string_view Fail(std::string message);
  // Consumes one CRLF-terminated line from `in` into line_; true when it is complete.
  bool TakeLine(std::string_view& in);

  BodyFraming framing_ = BodyFraming::kNone;
  State state_ = State::kDone;
  uint64_t remaining_ = 0;  // payload bytes left of the body (kLength) or the current chunk
  std::string line_;        // a chunk-size or trailer line read so far
  std::string error_;
};

}  // namespace swapd
