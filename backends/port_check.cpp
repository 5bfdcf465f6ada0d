#include "backends/port_check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace swapd {
namespace {

// Whether a connection to a loopback address succeeds (loopback answers at once: accepted or
// refused).
bool Listening(int family, const char* address, int port) {
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int rc = -1;
  if (family == AF_INET) {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET, address, &sa.sin_addr);
    rc = ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  } else {
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET6, address, &sa.sin6_addr);
    rc = ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  }
  ::close(fd);
  return rc == 0;
}

}  // namespace

Status CheckProxyPortFree(const std::string& model_id, const std::string& proxy_url) {
  const size_t scheme = proxy_url.find("://");
  if (scheme == std::string::npos) return Status::Ok();
  std::string authority = proxy_url.substr(scheme + 3);
  authority = authority.substr(0, authority.find('/'));
  std::string host;
  std::string port_text;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string::npos) return Status::Ok();
    host = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':') {
      port_text = authority.substr(close + 2);
    }
  } else {
    const size_t colon = authority.rfind(':');
    host = authority.substr(0, colon);
    if (colon != std::string::npos) port_text = authority.substr(colon + 1);
  }
  if (port_text.empty()) return Status::Ok();  // a default port: not a backend swapd picks
  const int port = std::atoi(port_text.c_str());
  if (port <= 0 || port > 65535) return Status::Ok();
  const bool v4 = host == "localhost" || host == "127.0.0.1";
  const bool v6 = host == "localhost" || host == "::1";
  if ((v4 && Listening(AF_INET, "127.0.0.1", port)) || (v6 && Listening(AF_INET6, "::1", port))) {
    return Status::Error(
        ErrorCode::kBackendFailed,
        "model \"" + model_id + "\": port " + std::to_string(port) + " (of its proxy " + proxy_url +
            ") is already in use by another process: the backend could not bind it, and swapd "
            "would send this model's requests to that process. Stop it, or give the model "
            "another port");
  }
  return Status::Ok();
}

}  // namespace swapd
