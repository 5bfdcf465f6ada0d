#include "http/request_context.h"

#include <poll.h>

namespace swapd {

bool RequestContext::WaitReadable(int fd, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(timeout.count())) > 0 && (p.revents & POLLIN) != 0;
}

}  // namespace swapd
