#include "http/request_context.h"

#include "base/wake_fd.h"

namespace swapd {

bool RequestContext::WaitReadable(int fd, std::chrono::milliseconds timeout) {
  return swapd::WaitReadable(fd, timeout);
}

}  // namespace swapd
