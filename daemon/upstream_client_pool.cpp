#include "daemon/upstream_client_pool.h"

#include <poll.h>

#include <iterator>

namespace swapd {

void UpstreamClientPool::ExpireLocked(std::vector<IdleClient>& idle, Clock::time_point now,
                                      std::vector<IdleClient>& dropped) {
  size_t expired = 0;
  while (expired < idle.size() && now - idle[expired].since > kMaxIdle) ++expired;
  if (expired == 0) return;
  std::move(idle.begin(), idle.begin() + expired, std::back_inserter(dropped));
  idle.erase(idle.begin(), idle.begin() + expired);
}

namespace {

// An idle keep-alive connection has nothing to read; if it has (EOF, a reset, stray bytes), the
// backend closed it or died, and a request sent on it would fail after the fact.
bool StillOpen(const httplib::Client& client) {
  const int fd = client.socket();
  if (fd < 0) return true;  // not connected yet: send() connects
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  return poll(&p, 1, 0) == 0;
}

}  // namespace

std::unique_ptr<httplib::Client> UpstreamClientPool::Take(const std::string& origin) {
  std::vector<IdleClient> dropped;
  {
    std::lock_guard lock(mu_);
    auto it = idle_.find(origin);
    if (it != idle_.end()) {
      ExpireLocked(it->second, Clock::now(), dropped);
      while (!it->second.empty()) {
        auto client = std::move(it->second.back().client);
        it->second.pop_back();
        if (StillOpen(*client)) return client;
        dropped.push_back(IdleClient{std::move(client), {}});  // the backend closed it (or died)
      }
    }
  }
  auto client = std::make_unique<httplib::Client>(origin);
  client->set_keep_alive(true);
  client->set_connection_timeout(std::chrono::seconds(10));
  client->set_read_timeout(read_timeout_);
  client->set_write_timeout(std::chrono::minutes(5));
  client->set_decompress(false);  // bytes pass through as the backend sent them
  client->set_tcp_nodelay(true);
  return client;
}

void UpstreamClientPool::GiveBack(const std::string& origin,
                                  std::unique_ptr<httplib::Client> client) {
  std::vector<IdleClient> dropped;
  std::lock_guard lock(mu_);
  auto& idle = idle_[origin];
  const Clock::time_point now = Clock::now();
  ExpireLocked(idle, now, dropped);
  if (idle.size() < kMaxIdlePerOrigin) idle.push_back({std::move(client), now});
}

void UpstreamClientPool::Forget(const std::string& origin) {
  std::vector<IdleClient> dropped;
  {
    std::lock_guard lock(mu_);
    auto it = idle_.find(origin);
    if (it == idle_.end()) return;
    dropped.swap(it->second);
    idle_.erase(it);
  }
}

}  // namespace swapd
