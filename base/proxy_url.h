// A model's `proxy` URL taken apart: what an HTTP client connects to (scheme://host:port), the
// path prefix every request goes under, the authority (host[:port], as a Host header names it),
// and the host and port themselves. Used wherever swapd talks to a backend (readiness, slot
// cache, port check, the proxy). Pure; thread safe.
#pragma once

#include <string>

namespace swapd {

struct ProxyUrl {
  std::string origin;       // "http://localhost:5800"
  std::string path_prefix;  // "" or "/something" (no trailing '/')
  std::string authority;    // "localhost:5800", "[::1]:5800", "api.example.org" (the Host header)
  std::string host;         // "localhost", "127.0.0.1", "::1" (without brackets)
  int port = 0;             // 0 when the URL names none (or not a valid one)
};

ProxyUrl ParseProxyUrl(const std::string& proxy_url);

}  // namespace swapd
