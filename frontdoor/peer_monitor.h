// PeerMonitor: what swapd knows of each peer's health, so that a request for a peer that is down
// gets a fast 503 naming it instead of waiting out a connect timeout. A thread asks each peer's
// /v1/models (with its apiKey) every `interval` while it answers, and backs off (doubling, up to
// `max_backoff`) while it does not; real requests report what they found too, and a request that
// finds its peer down asks for a check at once. States: unknown (not checked yet), up (a model
// list came back), error (it answers HTTP, but not with a model list: a wrong key, a 500), down
// (no connection, no HTTP answer, or nothing within the check's time). Only "down" refuses
// requests. Thread safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "config/config.h"

namespace swapd {

struct PeerHealth {
  enum class State { kUnknown, kUp, kError, kDown };
  State state = State::kUnknown;
  std::string detail;  // why it is down or in error, e.g. "connection refused (127.0.0.1:9)"
  std::optional<std::chrono::milliseconds> latency;  // of the last check that got an answer
  std::chrono::system_clock::time_point checked{};   // the last check; the epoch: never
  std::chrono::steady_clock::time_point next_check{};
  int failures = 0;    // checks in a row that found it down
  int64_t models = 0;  // how many models its last model list named
};
const char* ToString(PeerHealth::State state);

// Seconds until `health`'s next check, rounded up; 0 when it is due.
inline int64_t SecondsToNextCheck(const PeerHealth& health) {
  const auto left = health.next_check - std::chrono::steady_clock::now();
  return left <= left.zero() ? 0 : std::chrono::ceil<std::chrono::seconds>(left).count();
}

class PeerMonitor {
 public:
  struct Settings {
    std::chrono::milliseconds interval{std::chrono::seconds(5)};
    std::chrono::milliseconds max_backoff{std::chrono::seconds(60)};
  };
  explicit PeerMonitor(Settings settings);
  ~PeerMonitor();  // Stop()
  PeerMonitor(const PeerMonitor&) = delete;
  PeerMonitor& operator=(const PeerMonitor&) = delete;

  // The peers to watch (at start and on every reload). A new or changed peer is checked at once;
  // an unchanged one keeps its health.
  void SetPeers(const std::map<std::string, PeerConfig>& peers);
  std::optional<PeerHealth> Health(const std::string& peer) const;
  std::map<std::string, PeerHealth> All() const;

  // What a request found: no connection could be made (`why`), or the peer answered.
  void Unreachable(const std::string& peer, const std::string& why);
  void Reached(const std::string& peer);
  // Asks for a check of `peer` now, unless one ran less than a second ago.
  void CheckSoon(const std::string& peer);

  // Ends the thread; a check under way is cut short (at most its connect time).
  void Stop();

 private:
  using Clock = std::chrono::steady_clock;
  struct Watched {
    PeerConfig config;
    PeerHealth health;
  };
  void Run();
  // One GET <proxy>/v1/models; the result goes into `health` (mu_ not held during the call).
  PeerHealth Check(const PeerConfig& peer, PeerHealth health) const;
  // The next check after a result, by state: `interval` while answering, backing off while down.
  void Schedule(PeerHealth& health) const;

  const Settings settings_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::map<std::string, Watched> peers_;  // Guarded by mu_
  bool stop_ = false;                     // Guarded by mu_
  std::atomic<bool> stopping_{false};     // cuts a check's reads short
  std::thread thread_;
};

}  // namespace swapd
