#include "frontdoor/proxy_message.h"

#include "http/http1_syntax.h"

namespace swapd {

bool IsHopByHop(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      "connection",  "keep-alive",     "proxy-authenticate", "proxy-authorization",
      "te",          "trailer",        "transfer-encoding",  "upgrade",
      "host",        "content-length", "accept-encoding",    "expect",
      "remote_addr", "remote_port",    "local_addr",         "local_port"};
  for (std::string_view n : kNames) {
    if (EqualsIgnoreCase(name, n)) return true;
  }
  return false;
}

bool IsEventStream(std::string_view content_type) {
  return StartsWithIgnoreCase(content_type, "text/event-stream");
}

std::string UpstreamRequestHead(const ProxyUrl& url, const ProxyRequest& request) {
  static const HttpHeaders kNoHeaders;
  return FormatRequestHead(url, request.method, request.target, "",
                           request.headers ? *request.headers : kNoHeaders, IsHopByHop,
                           request.body.size());
}

ResponseHead CopyHeaders(const std::vector<HeaderField>& headers, HttpResponse& res) {
  ResponseHead head;
  for (const auto& [name, value] : headers) {
    if (EqualsIgnoreCase(name, "content-type")) {
      head.content_type = value;
      continue;
    }
    if (!IsHopByHop(name)) res.headers.Add(std::string(name), std::string(value));
  }
  head.sse = IsEventStream(head.content_type);
  return head;
}

}  // namespace swapd
