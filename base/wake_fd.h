// WakeFd: an eventfd that is readable while it is signalled, so that a thread can wait for "there
// is something for you" in poll, together with other fds (a client's socket, a server's stop).
// Signal and Clear cost a system call only when the state changes: a producer that signals a
// hundred times before the waiter looks writes once. Not thread safe: its owner guards it.
#pragma once

#include <chrono>

namespace swapd {

class WakeFd {
 public:
  WakeFd();  // eventfd() may fail (out of file descriptors): then ok() is false and fd() -1
  ~WakeFd();
  WakeFd(const WakeFd&) = delete;
  WakeFd& operator=(const WakeFd&) = delete;

  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  void Signal();
  void Clear();

 private:
  const int fd_;
  bool signalled_ = false;
};

// Waits up to `timeout` for `fd` to be readable; true when it is. A negative fd only times out.
// A signal may end the wait early (false): callers loop.
bool WaitReadable(int fd, std::chrono::milliseconds timeout);

}  // namespace swapd
