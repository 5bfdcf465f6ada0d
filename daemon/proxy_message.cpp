#include "daemon/proxy_message.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace swapd {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

bool IsHopByHop(const std::string& name) {
  static const char* const kNames[] = {
      "connection",  "keep-alive",     "proxy-authenticate", "proxy-authorization",
      "te",          "trailer",        "transfer-encoding",  "upgrade",
      "host",        "content-length", "accept-encoding",    "expect",
      "remote_addr", "remote_port",    "local_addr",         "local_port"};
  std::string lower = Lower(name);
  for (const char* n : kNames) {
    if (lower == n) return true;
  }
  return false;
}

bool IsEventStream(const std::string& content_type) {
  return Lower(content_type).rfind("text/event-stream", 0) == 0;
}

std::string UpstreamRequestHead(const ProxyUrl& url, const ProxyRequest& request) {
  std::string head;
  head.reserve(256 + request.target.size());
  head += request.method;
  head += ' ';
  head += url.path_prefix;
  head += request.target;
  head += " HTTP/1.1\r\nHost: ";
  head += url.authority;
  head += "\r\n";
  static const httplib::Headers kNoHeaders;
  for (const auto& [name, value] : request.headers ? *request.headers : kNoHeaders) {
    if (IsHopByHop(name)) continue;
    head += name;
    head += ": ";
    head += value;
    head += "\r\n";
  }
  if (!request.body.empty() || request.method == "POST" || request.method == "PUT" ||
      request.method == "PATCH") {
    head += "Content-Length: " + std::to_string(request.body.size()) + "\r\n";
  }
  head += "\r\n";
  return head;
}

ResponseHead CopyHeaders(const httplib::Headers& headers, httplib::Response& res) {
  ResponseHead head;
  for (const auto& [name, value] : headers) {
    std::string lower = Lower(name);
    if (lower == "content-type") {
      head.content_type = value;
      continue;
    }
    if (lower == "content-length") {
      head.has_length = true;
      head.content_length = std::strtoull(value.c_str(), nullptr, 10);
      continue;
    }
    if (!IsHopByHop(name)) res.headers.emplace(name, value);
  }
  head.sse = IsEventStream(head.content_type);
  return head;
}

}  // namespace swapd
