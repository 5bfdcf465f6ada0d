// UpstreamClientPool: keep-alive HTTP clients to backends, reused across requests. A client is
// taken for one request and given back when that request ended cleanly (its connection may then
// be reused); a client whose request failed or was cancelled is dropped. The most recently used
// client is taken first, so the idle ones beyond the current load age out: a client idle for
// kMaxIdle is closed (an idle keep-alive connection holds one of the backend's HTTP threads, and
// llama-server has few; its own keep-alive timeout is 5 s). Thread safe.
#pragma once

#include <httplib.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace swapd {

class UpstreamClientPool {
 public:
  // `read_timeout`: how long a client waits for the backend's next byte.
  explicit UpstreamClientPool(std::chrono::seconds read_timeout = std::chrono::hours(2))
      : read_timeout_(read_timeout) {}

  std::unique_ptr<httplib::Client> Take(const std::string& origin);
  void GiveBack(const std::string& origin, std::unique_ptr<httplib::Client> client);
  // Drops idle clients of `origin` (e.g. after its backend stopped).
  void Forget(const std::string& origin);

 private:
  using Clock = std::chrono::steady_clock;
  struct IdleClient {
    std::unique_ptr<httplib::Client> client;
    Clock::time_point since;
  };
  // Enough for every connection of a busy backend (64 concurrent requests) to be reused instead
  // of reconnecting; idle connections exist only up to the recent peak of concurrent requests.
  static constexpr size_t kMaxIdlePerOrigin = 64;
  static constexpr Clock::duration kMaxIdle = std::chrono::seconds(3);
  // Closes the clients of `idle` that have waited longer than kMaxIdle. mu_ held; the dropped
  // clients are moved to `dropped` so that their sockets close outside the lock.
  static void ExpireLocked(std::vector<IdleClient>& idle, Clock::time_point now,
                           std::vector<IdleClient>& dropped);

  const std::chrono::seconds read_timeout_;
  std::mutex mu_;
  // Oldest first. Guarded by mu_.
  std::map<std::string, std::vector<IdleClient>> idle_;
};

}  // namespace swapd
