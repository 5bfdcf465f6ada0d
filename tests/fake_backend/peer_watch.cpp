#include "tests/fake_backend/peer_watch.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

namespace swapd {

PeerWatch::PeerWatch(int remote_port) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return;
  while (dirent* entry = ::readdir(dir)) {
    const int fd = std::atoi(entry->d_name);
    if (fd <= STDERR_FILENO || fd == ::dirfd(dir)) continue;
    sockaddr_storage addr = {};
    socklen_t len = sizeof(addr);
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) continue;
    int port = -1;
    if (addr.ss_family == AF_INET) port = ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    if (addr.ss_family == AF_INET6) port = ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
    if (port == remote_port) {
      fd_ = fd;
      break;
    }
  }
  ::closedir(dir);
}

bool PeerWatch::Closed() const {
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

}  // namespace swapd
