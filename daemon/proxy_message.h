// What crosses the upstream proxy, and the pure rules it applies to it: the request forwarded to
// a backend (hop-by-hop headers removed), the response headers passed back, and which requests
// can be answered buffered (a JSON route whose body does not ask for "stream": true). No I/O;
// thread safe.
#pragma once

#include <httplib.h>

#include <string>
#include <string_view>

#include "config/proxy_url.h"

namespace swapd {

struct ProxyRequest {
  std::string method;
  std::string target;        // path and query, as the backend should see them
  httplib::Headers headers;  // the client's; hop-by-hop and swapd's own are removed here
  std::string body;
};

// Headers that belong to one connection (RFC 9110 7.6.1), lengths httplib recomputes, and the
// pseudo-headers cpp-httplib adds to server requests. Case-insensitive.
bool IsHopByHop(const std::string& name);

bool IsEventStream(const std::string& content_type);

// The routes whose answers are JSON documents (llama-server, OpenAI, Anthropic APIs); `target`
// may carry a query.
bool IsJsonRoute(std::string_view target);

// Whether a JSON body has a member "stream" whose value is `true`, found by a scan rather than a
// second parse. In valid JSON the text `"stream"` followed by `:` can only be a key, so the only
// false positive is a nested "stream" key, and the only miss a key spelled with escapes; either
// way the request is still served, on the other path.
bool AsksForStream(std::string_view body);

// The request to send to the backend at `url`; moves the method and body out of `request`.
httplib::Request UpstreamRequest(const ProxyUrl& url, ProxyRequest& request);

// What the client's response takes from the backend's headers.
struct ResponseHead {
  std::string content_type = "application/octet-stream";
  bool has_length = false;
  size_t content_length = 0;
  bool sse = false;
};

// Copies the backend's end-to-end headers to `res` except Content-Type and Content-Length,
// which are returned (httplib sets them from the body).
ResponseHead CopyHeaders(const httplib::Headers& headers, httplib::Response& res);

}  // namespace swapd
