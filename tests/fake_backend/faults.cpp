#include "tests/fake_backend/faults.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "tests/fake_backend/log.h"

namespace fake_backend {
namespace {

// Bytes that no HTTP parser takes for a status line.
constexpr char kGarbage[] = "SPLAT\x01\x02 this is not HTTP \xff\xfe\r\n\r\n{{{{";

// The port of a socket address, or -1 when it is not IPv4/IPv6.
int PortOf(const sockaddr_storage& addr) {
  if (addr.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<const sockaddr_in&>(addr).sin_port);
  }
  if (addr.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6&>(addr).sin6_port);
  }
  return -1;
}

// The connected socket whose local and peer ports are these (unique over loopback), or -1.
int FindConnectionSocket(int local_port, int remote_port) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int found = -1;
  while (dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == ::dirfd(dir)) continue;
    sockaddr_storage local = {};
    sockaddr_storage peer = {};
    socklen_t local_len = sizeof(local);
    socklen_t peer_len = sizeof(peer);
    if (::getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&local), &local_len) != 0 ||
        ::getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) {
      continue;
    }
    if (PortOf(local) == local_port && PortOf(peer) == remote_port) {
      found = static_cast<int>(fd);
      break;
    }
  }
  ::closedir(dir);
  return found;
}

}  // namespace

bool WantsConnectionFault(const Options& options) {
  return options.garbage_response || options.close_without_response;
}

bool ApplyConnectionFault(const Options& options, const httplib::Request& req) {
  const int fd = FindConnectionSocket(req.local_port, req.remote_port);
  if (fd < 0) {
    LogLine("fake: no socket found for " + req.remote_addr + ":" + std::to_string(req.remote_port));
    return false;
  }
  if (options.garbage_response) {
    LogLine("fake: answering garbage instead of HTTP (--garbage-response)");
    [[maybe_unused]] ssize_t n = ::send(fd, kGarbage, sizeof(kGarbage) - 1, MSG_NOSIGNAL);
  } else {
    LogLine("fake: closing the connection without a response (--close-without-response)");
  }
  // The fd stays open (cpp-httplib owns and closes it); shutdown ends the connection now.
  ::shutdown(fd, SHUT_RDWR);
  return true;
}

bool KeptConnections::CloseIfReused(const httplib::Request& req, bool model_route) {
  const int fd = FindConnectionSocket(req.local_port, req.remote_port);
  struct stat st = {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    LogLine("fake: no socket found for " + req.remote_addr + ":" + std::to_string(req.remote_port));
    return false;
  }
  {
    std::lock_guard lock(mu_);
    if (seen_.insert(st.st_ino).second || !model_route) return false;
  }
  LogLine("fake: closing a kept-alive connection without answering (--close-kept-connections)");
  ::shutdown(fd, SHUT_RDWR);
  return true;
}

void HangStream(httplib::DataSink& sink) {
  LogLine("fake: the stream goes silent (--hang-mid-stream)");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (sink.is_writable && !sink.is_writable()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace fake_backend
