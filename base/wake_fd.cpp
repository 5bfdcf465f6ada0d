#include "base/wake_fd.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace swapd {

WakeFd::WakeFd() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

WakeFd::~WakeFd() {
  if (fd_ >= 0) ::close(fd_);
}

void WakeFd::Signal() {
  if (signalled_ || fd_ < 0) return;
  signalled_ = true;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(fd_, &one, sizeof(one));
}

void WakeFd::Clear() {
  if (!signalled_) return;
  signalled_ = false;
  uint64_t value;
  [[maybe_unused]] ssize_t n = ::read(fd_, &value, sizeof(value));
}

bool WaitReadable(int fd, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(timeout.count())) > 0 && (p.revents & POLLIN) != 0;
}

}  // namespace swapd
