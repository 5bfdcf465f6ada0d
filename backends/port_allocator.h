// PortAllocator: the ports swapd gives the backends whose cmd uses ${PORT}, one allocator for the
// whole process. A starting backend asks for its configured port and gets it when it is free: no
// other backend of this swapd holds it, it was not found in use lately, and the system would let
// a backend bind it now; else it gets the next free port above. A PortLease holds the port while
// the backend's process lives; a port the process could not bind after all is given back as busy
// (MarkBusy) and skipped for a while. Ports written as numbers in a model's cmd and proxy are
// never handed out here: the caller names them in `avoid`.
// Thread safe. A PortLease is a move-only value owned by one backend; it must not outlive its
// allocator (the process's allocator lives as long as the process).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace swapd {

class PortAllocator;

// A port passed over, and why, to follow "port 5800 is ": "held by model \"b\"", "in use by
// another process", "in use (seen 3 s ago)", "the fixed port of another model".
struct SkippedPort {
  int port = 0;
  std::string why;
};

class PortLease {
 public:
  PortLease() = default;
  PortLease(PortLease&& other) noexcept;
  PortLease& operator=(PortLease&& other) noexcept;
  PortLease(const PortLease&) = delete;
  PortLease& operator=(const PortLease&) = delete;
  ~PortLease();  // gives the port back

  bool held() const { return allocator_ != nullptr; }
  int port() const { return port_; }
  // The ports below it that were passed over; empty when it is the one asked for.
  const std::vector<SkippedPort>& skipped() const { return skipped_; }
  // The backend could not bind the port after all: give it back, remembered as in use.
  void MarkBusy();
  void Release();

 private:
  friend class PortAllocator;
  PortAllocator* allocator_ = nullptr;
  int port_ = 0;
  std::vector<SkippedPort> skipped_;
};

class PortAllocator {
 public:
  using Clock = std::chrono::steady_clock;
  // Whether a backend could bind `port` now. The default: PortBindable.
  using Probe = std::function<bool(int port)>;

  // How long a port found in use is skipped without looking again.
  static constexpr std::chrono::seconds kBusyMemory{30};
  // How many ports at most are looked at above the one asked for.
  static constexpr int kMaxScan = 256;

  explicit PortAllocator(Probe probe = nullptr,
                         std::function<Clock::time_point()> now = Clock::now);

  // A port for `owner` (a model id): `wanted` when it is free, else the next free one above,
  // skipping `avoid`. kUnavailable, naming the range, when none of kMaxScan ports is.
  Result<PortLease> Acquire(const std::string& owner, int wanted, const std::set<int>& avoid = {});

  // Who holds `port` now; empty when nobody. For tests and messages.
  std::string Holder(int port) const;

 private:
  friend class PortLease;
  void Release(int port, bool busy);

  const Probe probe_;
  const std::function<Clock::time_point()> now_;
  mutable std::mutex mu_;
  std::map<int, std::string> held_;        // Guarded by mu_. port -> owner
  std::map<int, Clock::time_point> busy_;  // Guarded by mu_. port -> when found in use
};

// The allocator of this process, shared by every backend.
PortAllocator& ProcessPortAllocator();

// Whether a socket could bind TCP `port` now on every IPv4 address (and IPv6 where the system has
// it), with SO_REUSEADDR as servers set it: false when any process listens on it, on any address.
bool PortBindable(int port);

// Whether a backend's output says it could not bind its port ("Address already in use",
// EADDRINUSE, llama-server's "couldn't bind HTTP server socket"). Case is ignored.
bool SaysAddressInUse(std::string_view output);

}  // namespace swapd
