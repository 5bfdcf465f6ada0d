#include "daemon/sd_notify.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace swapd {
namespace {

// A non-empty run of decimal digits that fits in a uint64_t; nothing else (no sign, no spaces).
bool ParseDecimal(const char* text, uint64_t* out) {
  if (text == nullptr || *text < '0' || *text > '9') return false;
  const char* end = text + std::strlen(text);
  auto [stop, error] = std::from_chars(text, end, *out);
  return error == std::errc() && stop == end;
}

Status NotifyError(const std::string& what) {
  return Status::Error(ErrorCode::kInternal, "sd_notify: " + what);
}

// Closes the descriptor on every return path.
class SocketFd {
 public:
  explicit SocketFd(int fd) : fd_(fd) {}
  ~SocketFd() {
    if (fd_ >= 0) close(fd_);
  }
  SocketFd(const SocketFd&) = delete;
  SocketFd& operator=(const SocketFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

Result<bool> SdNotify(std::string_view state) {
  const char* name = std::getenv("NOTIFY_SOCKET");
  if (name == nullptr || *name == '\0') return false;

  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  size_t name_length = std::strlen(name);
  if (name[0] != '/' && name[0] != '@') {
    return NotifyError("NOTIFY_SOCKET=" + std::string(name) +
                       " is neither an absolute path nor an abstract '@' name");
  }
  // A path needs room for its terminating NUL; an abstract name has none: its '@' becomes the
  // leading NUL byte and the address length, not a terminator, ends it.
  if (name_length + (name[0] == '/' ? 1 : 0) > sizeof(address.sun_path)) {
    return NotifyError("NOTIFY_SOCKET is longer than a unix socket address");
  }
  std::memcpy(address.sun_path, name, name_length);
  if (name[0] == '@') address.sun_path[0] = '\0';
  socklen_t address_length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name_length +
                                                    (name[0] == '/' ? 1 : 0));

  SocketFd fd(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return NotifyError(std::string("socket: ") + std::strerror(errno));
  ssize_t sent;
  do {
    sent = sendto(fd.get(), state.data(), state.size(), MSG_NOSIGNAL,
                  reinterpret_cast<const sockaddr*>(&address), address_length);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) {
    return NotifyError("send to " + std::string(name) + ": " + std::strerror(errno));
  }
  if (static_cast<size_t>(sent) != state.size()) {
    return NotifyError("short datagram to " + std::string(name));
  }
  return true;
}

std::chrono::microseconds WatchdogTimeout(const char* watchdog_usec, const char* watchdog_pid,
                                          pid_t self) {
  uint64_t usec = 0;
  // UINT64_MAX is systemd's "infinity": no watchdog.
  if (!ParseDecimal(watchdog_usec, &usec) || usec == 0 ||
      usec == std::numeric_limits<uint64_t>::max()) {
    return std::chrono::microseconds(0);
  }
  if (watchdog_pid != nullptr) {
    uint64_t pid = 0;
    if (!ParseDecimal(watchdog_pid, &pid) || pid != static_cast<uint64_t>(self)) {
      return std::chrono::microseconds(0);
    }
  }
  if (usec > static_cast<uint64_t>(std::chrono::microseconds::max().count())) {
    return std::chrono::microseconds(0);
  }
  return std::chrono::microseconds(static_cast<std::chrono::microseconds::rep>(usec));
}

std::chrono::microseconds SdWatchdogTimeout() {
  return WatchdogTimeout(std::getenv("WATCHDOG_USEC"), std::getenv("WATCHDOG_PID"), getpid());
}

}  // namespace swapd
