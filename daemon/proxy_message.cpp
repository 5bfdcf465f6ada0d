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
      "host",        "content-length", "accept-encoding",    "remote_addr",
      "remote_port", "local_addr",     "local_port"};
  std::string lower = Lower(name);
  for (const char* n : kNames) {
    if (lower == n) return true;
  }
  return false;
}

bool IsEventStream(const std::string& content_type) {
  return Lower(content_type).rfind("text/event-stream", 0) == 0;
}

// The routes whose answers are JSON documents (llama-server, OpenAI, Anthropic APIs); a request
// to them that does not ask for a stream can be answered buffered. /v1/audio/speech (audio of
// unknown size) and the paths of /upstream/ other than these stay on the streaming path.
bool IsJsonRoute(std::string_view target) {
  static constexpr std::string_view kRoutes[] = {
      "/v1/chat/completions", "/v1/completions",
      "/v1/embeddings",       "/v1/responses",
      "/v1/messages",         "/v1/messages/count_tokens",
      "/v1/rerank",           "/rerank",
      "/v1/reranking",        "/reranking",
      "/completion",          "/infill",
      "/chat/completions",    "/completions",
      "/embeddings",          "/embedding"};
  std::string_view path = target.substr(0, target.find('?'));
  for (std::string_view route : kRoutes) {
    if (path == route) return true;
  }
  return false;
}

bool AsksForStream(std::string_view body) {
  constexpr std::string_view kKey = "\"stream\"";
  for (size_t at = body.find(kKey); at != std::string_view::npos; at = body.find(kKey, at + 1)) {
    size_t i = at + kKey.size();
    auto skip_space = [&] {
      while (i < body.size() &&
             (body[i] == ' ' || body[i] == '\t' || body[i] == '\n' || body[i] == '\r')) {
        ++i;
      }
    };
    skip_space();
    if (i >= body.size() || body[i] != ':') continue;
    ++i;
    skip_space();
    if (body.substr(i, 4) == "true") return true;
  }
  return false;
}

httplib::Request UpstreamRequest(const ProxyUrl& url, ProxyRequest& request) {
  httplib::Request req;
  req.method = std::move(request.method);
  req.path = url.path_prefix + request.target;
  for (auto& [name, value] : request.headers) {
    if (!IsHopByHop(name)) req.headers.emplace(name, value);
  }
  req.body = std::move(request.body);
  return req;
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
