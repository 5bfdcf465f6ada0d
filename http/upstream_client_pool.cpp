#include "http/upstream_client_pool.h"

#include <iterator>

namespace swapd {

void UpstreamClientPool::ExpireLocked(std::vector<Idle>& idle, Clock::time_point now,
                                      std::vector<Idle>& dropped) {
  size_t expired = 0;
  while (expired < idle.size() && now > idle[expired].expires) ++expired;
  if (expired == 0) return;
  std::move(idle.begin(), idle.begin() + expired, std::back_inserter(dropped));
  idle.erase(idle.begin(), idle.begin() + expired);
}

std::unique_ptr<UpstreamConnection> UpstreamClientPool::Take(const std::string& origin) {
  for (;;) {
    std::unique_ptr<UpstreamConnection> connection = TakeNewest(origin);
    // Checked outside the lock: it is a system call, and every request to the origin passes here.
    if (connection == nullptr || connection->IdleAndOpen()) return connection;
    // The backend closed it (or died): a request sent on it would fail after the fact. It is
    // closed here, and the next one is tried.
  }
}

std::unique_ptr<UpstreamConnection> UpstreamClientPool::TakeNewest(const std::string& origin) {
  std::vector<Idle> dropped;  // closed after the lock is released
  std::lock_guard lock(mu_);
  auto it = idle_.find(origin);
  if (it == idle_.end()) return nullptr;
  ExpireLocked(it->second, Clock::now(), dropped);
  if (it->second.empty()) return nullptr;
  std::unique_ptr<UpstreamConnection> connection = std::move(it->second.back().connection);
  it->second.pop_back();
  return connection;
}

void UpstreamClientPool::GiveBack(const std::string& origin,
                                  std::unique_ptr<UpstreamConnection> connection,
                                  std::optional<std::chrono::seconds> max_idle) {
  if (!connection->Reusable()) return;
  std::vector<Idle> dropped;
  std::lock_guard lock(mu_);
  const Clock::time_point now = Clock::now();
  if (now >= next_sweep_) {
    next_sweep_ = now + max_idle_;
    for (auto it = idle_.begin(); it != idle_.end();) {
      ExpireLocked(it->second, now, dropped);
      it = it->second.empty() ? idle_.erase(it) : std::next(it);
    }
  }
  auto& idle = idle_[origin];
  ExpireLocked(idle, now, dropped);
  const Clock::duration keep = max_idle ? Clock::duration(*max_idle) : max_idle_;
  const Clock::time_point expires = keep.count() > 0 ? now + keep : Clock::time_point::max();
  if (idle.size() < kMaxIdlePerOrigin) idle.push_back({std::move(connection), expires});
}

size_t UpstreamClientPool::IdleCount() {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [origin, idle] : idle_) n += idle.size();
  return n;
}

}  // namespace swapd
