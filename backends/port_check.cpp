#include "backends/port_check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/proxy_url.h"

namespace swapd {
namespace {

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "127.0.0.1" || host == "::1" || host == "[::1]";
}

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

int FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

Status CheckProxyPortFree(const std::string& model_id, const std::string& proxy_url) {
  const ProxyUrl url = ParseProxyUrl(proxy_url);
  const std::string& host = url.host;
  const int port = url.port;
  if (port == 0) return Status::Ok();  // a default port: not a backend swapd picks
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

std::set<int> FixedLoopbackPorts(const Config& config) {
  std::set<int> ports;
  for (const auto& [id, model] : config.models) {
    if (model.port_template || model.argv.empty()) continue;
    const ProxyUrl url = ParseProxyUrl(model.proxy);
    if (url.port != 0 && IsLoopback(url.host)) ports.insert(url.port);
  }
  return ports;
}

}  // namespace swapd
