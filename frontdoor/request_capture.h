// RequestCapture: what swapd keeps of one proxied request for GET /api/captures/{id} (llama-swap's
// captureBuffer): the request's path, headers and body as the client sent them, the response's
// headers and body as the client got them (an SSE answer: the bytes streamed). Header maps hold
// one value per name with API keys and cookies "[REDACTED]" (HeaderSnapshot, as the in-flight
// table's). The proxy builds one only when captures are on (ProxyRequest::capture_limit > 0), so
// that a request costs no copy otherwise; it stops copying and drops the capture once it outgrows
// the limit (it would not fit in the buffer anyway). A capture is a handful of allocations (the
// path, one per header map, the bodies), and Bytes() counts them as malloc takes them, while the
// request is under way; the CaptureStore then copies its bytes into its ring (CaptureStore::BytesOf
// counts them there). Built by one thread; immutable once handed on (shared as const).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "frontdoor/header_snapshot.h"
#include "http/message.h"

namespace swapd {

struct RequestCapture {
  std::string req_path;
  std::optional<HeaderSnapshot> req_headers;  // empty when not kept
  std::optional<std::string> req_body;
  std::optional<HeaderSnapshot> resp_headers;
  std::optional<std::string> resp_body;

  // The memory it takes, as counted against captureBuffer: itself, its shared_ptr's control
  // block and its heap buffers, each as glibc's malloc allocates it.
  size_t Bytes() const;
};

// A header map as GET /api/captures/{id} shows it: the object, or null when not kept.
nlohmann::json CapturedHeadersJson(const std::optional<HeaderSnapshot>& headers);

// Which parts llama-swap keeps of a request on `path`: everything, except on the media routes,
// where the (large, binary) bodies are left out. A failed request keeps no response body.
struct CaptureParts {
  bool req_headers = true;
  bool req_body = true;
  bool resp_headers = true;
  bool resp_body = true;
};
CaptureParts CapturePartsFor(std::string_view path);

// Builds one request's capture as its exchange goes. Does nothing (copies nothing) when the limit
// is 0. Not synchronized: used by one thread at a time, as the exchange is.
class CaptureBuilder {
 public:
  CaptureBuilder() = default;
  // The request: `limit` is captureBuffer in bytes.
  CaptureBuilder(size_t limit, std::string_view path, const HttpHeaders* headers,
                 std::string_view body);

  // The headers of the client's response (which may carry its Content-Type apart).
  void SetResponseHeaders(const HttpHeaders& headers, std::string_view content_type);
  // The next bytes the client is sent. Past the limit the capture is dropped.
  void AddResponseBytes(std::string_view piece);
  // The capture of a request answered with `status` (not 200: no response body, as llama-swap);
  // null when captures are off or it outgrew the limit.
  std::shared_ptr<const RequestCapture> Finish(int status);

 private:
  size_t limit_ = 0;
  CaptureParts parts_;
  std::shared_ptr<RequestCapture> capture_;  // null: off, or dropped
};

// captureBuffer (MB) in bytes; 0 when captures are off.
size_t CaptureBufferBytes(int64_t megabytes);

}  // namespace swapd
