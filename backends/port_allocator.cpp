#include "backends/port_allocator.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <utility>

namespace swapd {
namespace {

// Whether a socket of `family` binds the wildcard address on `port`. A family the system does not
// have cannot hold the port either.
bool WildcardBinds(int family, int port) {
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno == EAFNOSUPPORT;
  const int on = 1;
  // As a server sets it: a port whose last connections wait in TIME_WAIT is free to listen on.
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  int rc = -1;
  if (family == AF_INET) {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(port));
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
    rc = ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  } else {
    // IPv6 only: the IPv4 side is the AF_INET check's.
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons(static_cast<uint16_t>(port));
    sa.sin6_addr = in6addr_any;
    rc = ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  }
  const bool bound = rc == 0 || errno == EADDRNOTAVAIL;  // no IPv6 address configured
  ::close(fd);
  return bound;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

// ---- PortLease

PortLease::PortLease(PortLease&& other) noexcept
    : allocator_(std::exchange(other.allocator_, nullptr)),
      port_(other.port_),
      skipped_(std::move(other.skipped_)) {}

PortLease& PortLease::operator=(PortLease&& other) noexcept {
  if (this != &other) {
    Release();
    allocator_ = std::exchange(other.allocator_, nullptr);
    port_ = other.port_;
    skipped_ = std::move(other.skipped_);
  }
  return *this;
}

PortLease::~PortLease() { Release(); }

void PortLease::MarkBusy() {
  if (allocator_ != nullptr) std::exchange(allocator_, nullptr)->Release(port_, /*busy=*/true);
}

void PortLease::Release() {
  if (allocator_ != nullptr) std::exchange(allocator_, nullptr)->Release(port_, /*busy=*/false);
}

// ---- PortAllocator

PortAllocator::PortAllocator(Probe probe, std::function<Clock::time_point()> now)
    : probe_(probe ? std::move(probe) : Probe(PortBindable)), now_(std::move(now)) {}

Result<PortLease> PortAllocator::Acquire(const std::string& owner, int wanted,
                                         const std::set<int>& avoid) {
  std::lock_guard lock(mu_);
  const auto now = now_();
  PortLease lease;
  const int last = std::min(65535, wanted + kMaxScan - 1);
  for (int port = std::max(wanted, 1); port <= last; ++port) {
    if (auto held = held_.find(port); held != held_.end()) {
      lease.skipped_.push_back({port, "held by model \"" + held->second + "\""});
      continue;
    }
    if (avoid.count(port) != 0) {
      lease.skipped_.push_back({port, "the fixed port of another model"});
      continue;
    }
    if (auto busy = busy_.find(port); busy != busy_.end()) {
      const auto ago = std::chrono::duration_cast<std::chrono::seconds>(now - busy->second);
      if (ago < kBusyMemory) {
        lease.skipped_.push_back({port, "in use (seen " + std::to_string(ago.count()) + " s ago)"});
        continue;
      }
      busy_.erase(busy);
    }
    if (!probe_(port)) {
      busy_[port] = now;
      lease.skipped_.push_back({port, "in use by another process"});
      continue;
    }
    held_[port] = owner;
    lease.allocator_ = this;
    lease.port_ = port;
    return lease;
  }
  return Status::Error(ErrorCode::kUnavailable,
                       "no free port for ${PORT} in " + std::to_string(wanted) + "-" +
                           std::to_string(last) + " (each is in use or held by another model)");
}

std::string PortAllocator::Holder(int port) const {
  std::lock_guard lock(mu_);
  auto it = held_.find(port);
  return it == held_.end() ? std::string() : it->second;
}

void PortAllocator::Release(int port, bool busy) {
  std::lock_guard lock(mu_);
  held_.erase(port);
  if (busy) busy_[port] = now_();
}

PortAllocator& ProcessPortAllocator() {
  static PortAllocator* const allocator = new PortAllocator();  // never destroyed: see the header
  return *allocator;
}

bool PortBindable(int port) {
  return WildcardBinds(AF_INET, port) && WildcardBinds(AF_INET6, port);
}

bool SaysAddressInUse(std::string_view output) {
  const std::string text = Lower(output);
  // Go and libc's words, Python's errno, llama-server's and whisper.cpp's own.
  for (std::string_view needle : {"address already in use", "address in use", "eaddrinuse",
                                  "errno 98", "couldn't bind", "could not bind"}) {
    if (text.find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace swapd
