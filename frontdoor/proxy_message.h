// What crosses the upstream proxy, and the pure rules it applies to it: the request forwarded to
// a backend (hop-by-hop headers removed) and the response headers passed back. No I/O; thread
// safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/proxy_url.h"
#include "http/http1_response.h"
#include "http/message.h"

namespace swapd {

class InflightRequest;

// A request to pass on. It refers to the client's request and to the caller's strings, which
// outlive the exchange (nothing is copied).
struct ProxyRequest {
  std::string_view method;
  std::string_view target;               // path and query, as the backend should see them
  const HttpHeaders* headers = nullptr;  // the client's; hop-by-hop ones are left out
  std::string_view body;
  std::string_view route;  // for the request counters (ProxyRecord::route)
  bool activity = true;    // ProxyRecord::activity
  std::string_view path;   // the client's path (ProxyRecord::path)
  // The body as the client sent it (`body` may be filtered), for the capture.
  std::string_view client_body;
  // captureBuffer in bytes: the largest capture of the exchange (ProxyRecord::capture); 0: none.
  size_t capture_limit = 0;
  // What the client already got of this answer from swapd itself (sendLoadingState's text): the
  // capture's answer starts with it, as the client's did.
  std::string_view capture_prefix;
  // Its entry among the requests in flight (null for a request llama-swap does not track): told
  // of the answer's headers and bytes, and of the socket a cancel shuts down.
  std::shared_ptr<InflightRequest> inflight;
};

// Headers that belong to one connection (RFC 9110 7.6.1), lengths the proxy recomputes, Expect
// (the HTTP server has answered it), and the pseudo-headers cpp-httplib's server once added to
// requests (a client still cannot pass them on). Case-insensitive.
bool IsHopByHop(std::string_view name);

bool IsEventStream(std::string_view content_type);

// The head of the HTTP/1.1 request to send to the backend at `url`: request line, Host, the
// client's end-to-end fields, Content-Length, the empty line. The body follows as it is.
std::string UpstreamRequestHead(const ProxyUrl& url, const ProxyRequest& request);

// What the client's response takes from the backend's headers.
struct ResponseHead {
  std::string content_type;  // empty: the backend sent none, and none goes to the client
  bool sse = false;
};

// Copies the backend's end-to-end headers to `res` except Content-Type, which is returned, and
// Content-Length (ResponseStart has it): the front server writes both for the body it sends.
ResponseHead CopyHeaders(const std::vector<HeaderField>& headers, HttpResponse& res);

}  // namespace swapd
