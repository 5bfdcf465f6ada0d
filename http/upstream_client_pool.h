// UpstreamClientPool: idle keep-alive connections to backends, reused across requests. A
// connection is taken for one request and given back when its answer was read whole (it may
// then carry the next one); one whose request failed or was cut short is closed. The most
// recently used connection is taken first, so the idle ones beyond the current load age out: a
// connection idle for longer than max_idle (3 s) is closed (an idle keep-alive connection holds
// one of the backend's HTTP threads, and llama-server has few; its own keep-alive timeout is
// 5 s). Every origin's are expired now and then, so a stopped backend's do not wait for its next
// request.
// Thread safe.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "http/upstream_connection.h"

namespace swapd {

class UpstreamClientPool {
 public:
  explicit UpstreamClientPool(std::chrono::milliseconds max_idle = std::chrono::seconds(3))
      : max_idle_(max_idle) {}

  // An idle connection to `origin` that is still open, or nullptr.
  std::unique_ptr<UpstreamConnection> Take(const std::string& origin);
  // Keeps `connection` for the next request to `origin` if it is Reusable(); closes it otherwise.
  // It stays idle for at most `max_idle` (the pool's when unset; 0: no limit).
  void GiveBack(const std::string& origin, std::unique_ptr<UpstreamConnection> connection,
                std::optional<std::chrono::seconds> max_idle = std::nullopt);
  // The idle connections kept, over all origins.
  size_t IdleCount();

 private:
  using Clock = std::chrono::steady_clock;
  struct Idle {
    std::unique_ptr<UpstreamConnection> connection;
    Clock::time_point expires;
  };
  // Enough for every connection of a busy backend (64 concurrent requests) to be reused instead
  // of reconnecting; idle connections exist only up to the recent peak of concurrent requests.
  static constexpr size_t kMaxIdlePerOrigin = 64;
  // Moves the connections of `idle` that have expired to `dropped` (closed by the caller outside
  // the lock). mu_ held.
  void ExpireLocked(std::vector<Idle>& idle, Clock::time_point now, std::vector<Idle>& dropped);

  // The most recently given back connection to `origin`, open or not, or nullptr.
  std::unique_ptr<UpstreamConnection> TakeNewest(const std::string& origin);

  const Clock::duration max_idle_;
  std::mutex mu_;
  // Oldest first. Guarded by mu_.
  std::map<std::string, std::vector<Idle>> idle_;
  Clock::time_point next_sweep_{};  // of every origin's; guarded by mu_
};

}  // namespace swapd
