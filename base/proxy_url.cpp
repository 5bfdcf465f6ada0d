#include "base/proxy_url.h"

#include <algorithm>
#include <cstdlib>

namespace swapd {

ProxyUrl ParseProxyUrl(const std::string& proxy_url) {
  ProxyUrl url;
  const size_t scheme_end = proxy_url.find("://");
  const size_t host_start = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  const size_t path_start = proxy_url.find('/', host_start);
  if (path_start == std::string::npos) {
    url.origin = proxy_url;
  } else {
    url.origin = proxy_url.substr(0, path_start);
    url.path_prefix = proxy_url.substr(path_start);
    while (!url.path_prefix.empty() && url.path_prefix.back() == '/') url.path_prefix.pop_back();
  }
  url.authority = url.origin.substr(std::min(host_start, url.origin.size()));
  const std::string& authority = url.authority;
  std::string port_text;
  if (!authority.empty() && authority.front() == '[') {  // [::1]:8080
    const size_t close = authority.find(']');
    if (close == std::string::npos) return url;
    url.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':') {
      port_text = authority.substr(close + 2);
    }
  } else {
    const size_t colon = authority.rfind(':');
    url.host = authority.substr(0, colon);
    if (colon != std::string::npos) port_text = authority.substr(colon + 1);
  }
  const int port = port_text.empty() ? 0 : std::atoi(port_text.c_str());
  url.port = port > 0 && port <= 65535 ? port : 0;
  return url;
}

}  // namespace swapd
