#include "http/listen_socket.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace swapd {

Result<ListenSocket> Listen(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
      rc != 0) {
    return Status::Error(ErrorCode::kUnavailable,
                         "cannot listen on " + host + ": " + gai_strerror(rc));
  }
  ListenSocket listening;
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr && listening.fd < 0; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
      listening.fd = fd;
    } else {
      why = std::strerror(errno);
      ::close(fd);
    }
  }
  freeaddrinfo(found);
  if (listening.fd < 0) {
    return Status::Error(ErrorCode::kUnavailable,
                         "cannot listen on " + host + ":" + service + " (" + why + ")");
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  getsockname(listening.fd, reinterpret_cast<sockaddr*>(&bound), &len);
  AddressText(bound, listening.port);
  return listening;
}

std::string AddressText(const sockaddr_storage& addr, int& port) {
  char text[INET6_ADDRSTRLEN] = "";
  if (addr.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(addr);
    inet_ntop(AF_INET, &in.sin_addr, text, sizeof(text));
    port = ntohs(in.sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(addr);
    inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof(text));
    port = ntohs(in6.sin6_port);
  }
  return text;
}

}  // namespace swapd
