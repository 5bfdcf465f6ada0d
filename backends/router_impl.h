// RouterImpl: the Router's shared state and its two sides, private to backends/. router.cpp
// holds the request side (Acquire, Unload, reload, snapshots, shutdown) and the Lease;
// router_effects.cpp holds what the Scheduler's decisions do (backends started and stopped on
// worker threads, their exits, the TTL timer).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backends/router.h"
#include "backends/scheduler.h"
#include "backends/worker_threads.h"

namespace swapd {

// The Router's shared state. Leases hold it by shared_ptr, so it outlives the Router while a
// request is still in flight. Every event reaches the Scheduler under mu_; the Scheduler's
// effects run under mu_ too (they only record results, or hand Backend calls to worker threads).
// Backend methods are never called with mu_ held, except SetExitCallback on a new Backend.
class RouterImpl : public std::enable_shared_from_this<RouterImpl>, private SchedulerEffects {
 public:
  using Clock = std::chrono::steady_clock;

  RouterImpl(std::shared_ptr<const Config> config, BackendFactory factory)
      : factory_(std::move(factory)),
        config_(std::move(config)),
        proxy_urls_(ParseProxyUrls(*config_)),
        scheduler_(*config_, this) {}
  ~RouterImpl() override { Shutdown(); }

  static std::map<std::string, std::shared_ptr<const ProxyUrl>> ParseProxyUrls(
      const Config& config);

  // Starts the TTL timer thread; called once, right after construction.
  void StartTimer() {
    timer_ = std::thread([this] { TimerLoop(); });
  }

  Result<Lease> Acquire(const std::string& model_id, Clock::time_point deadline,
                        const std::function<bool()>& cancelled, bool evict_protected);
  void Finish(RequestId id) {
    std::lock_guard lock(mu_);
    scheduler_.RequestFinished(id, Clock::now());
    Changed();
  }
  void Unload(const std::string& model_id);
  void Load(const std::string& model_id) {
    std::lock_guard lock(mu_);
    scheduler_.SetNow(Clock::now());
    scheduler_.Preload({model_id});
    Changed();
  }
  void BeginUnload(const std::string& model_id);
  void SetResidencyTtl(const std::string& model_id, std::chrono::seconds ttl);
  void Preload() {
    std::lock_guard lock(mu_);
    scheduler_.Preload(config_->preload);
    Changed();
  }
  std::vector<ModelSnapshot> Snapshot() const;
  void SetExpectedLoad(const std::string& model_id, std::chrono::milliseconds expected);
  int QueuePosition(const std::string& model_id) const;
  bool IsReady(const std::string& model_id) const {
    std::lock_guard lock(mu_);
    return scheduler_.Phase(model_id) == ModelPhase::kReady;
  }
  bool AwaitNotReady(const std::string& model_id, Clock::time_point deadline) {
    std::unique_lock lock(mu_);
    return changed_.wait_until(lock, deadline,
                               [&] { return scheduler_.Phase(model_id) != ModelPhase::kReady; });
  }
  std::string AwaitFailure(const std::string& model_id, Clock::time_point deadline);
  void Shutdown();
  std::string LogTail(const std::string& model_id, size_t lines) const {
    std::shared_ptr<Backend> backend = FindBackend(model_id);
    return backend == nullptr ? std::string() : backend->LogTail(lines);
  }
  ConfigDiff Reconfigure(std::shared_ptr<const Config> config);
  void SetFootprint(const std::string& model, const Footprint& learned) {
    std::lock_guard lock(mu_);
    scheduler_.SetFootprint(model, learned);
    max_resident_.reset();
    Changed();
  }
  Scheduler::Preview Preview(const std::string& model_id) {
    std::lock_guard lock(mu_);
    scheduler_.SetNow(Clock::now());  // a residency's time left
    return scheduler_.PreviewFor(model_id);
  }
  MemoryAmount Budget() const {
    std::lock_guard lock(mu_);
    return scheduler_.budget();
  }
  int MaxResident() const;
  void SetEvents(RouterEvents events) {
    std::lock_guard lock(mu_);
    events_ = std::make_shared<const RouterEvents>(std::move(events));
  }

 private:
  struct Waiter {
    bool done = false;  // admitted (status ok) or rejected
    Status status;
  };

  // SchedulerEffects: called with mu_ held, from inside a Scheduler event.
  void StartModel(const std::string& model) override;
  void StopModel(const std::string& model, StopReason reason) override;
  void Admit(RequestId request) override {
    if (auto it = waiters_.find(request); it != waiters_.end()) it->second.done = true;
  }
  void Reject(RequestId request, const Status& why) override {
    if (auto it = waiters_.find(request); it != waiters_.end()) it->second = Waiter{true, why};
  }
  void Explain(const std::string& model, const std::string& why) override;

  // The model's Backend, made on first use; null without a factory. mu_ held.
  std::shared_ptr<Backend> BackendOf(const std::string& model);
  std::shared_ptr<Backend> FindBackend(const std::string& model) const {
    std::lock_guard lock(mu_);
    auto it = backends_.find(model);
    return it == backends_.end() ? nullptr : it->second;
  }
  // A start of `model` succeeded: its Lease URL follows where its backend listens. mu_ held.
  void FollowProxy(const std::string& model, const std::string& live_proxy);
  void TimerLoop();
  // Something changed: wake the waiting Acquire/Unload/Shutdown calls, and the timer if it
  // must now wake earlier than it planned (not on every request: that would cost a context
  // switch per request). mu_ held.
  void Changed() {
    changed_.notify_all();
    std::optional<Clock::time_point> next = scheduler_.NextDeadline();
    if (next && *next < timer_deadline_) timer_wake_.notify_all();
  }

  const BackendFactory factory_;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::condition_variable timer_wake_;
  // Guarded by mu_:
  std::shared_ptr<const Config> config_;
  // Each model's proxy, parsed once per configuration or start: a Lease shares it.
  std::map<std::string, std::shared_ptr<const ProxyUrl>> proxy_urls_;
  // The models whose backend listens elsewhere than their configured proxy says (its ${PORT} was
  // taken): model -> the proxy of its running backend. proxy_urls_ follows it.
  std::map<std::string, std::string> moved_proxies_;
  Scheduler scheduler_;
  // MaxResidentModels of the config and costs; reset when either changes.
  mutable std::optional<int> max_resident_;
  // Models whose next start needs a new Backend (their definition changed, or they were
  // removed and added again by a reload).
  std::set<std::string> renew_backend_;
  std::map<RequestId, Waiter> waiters_;  // one per Acquire that has not returned yet
  // Why each model's backend last left kReady: its exit reason (a crash) or its stop reason.
  // Cleared when the model starts again.
  std::map<std::string, std::string> last_exit_;
  std::map<std::string, std::chrono::milliseconds> last_load_;      // of the last successful start
  std::map<std::string, std::chrono::milliseconds> expected_load_;  // SetExpectedLoad's
  RequestId next_request_ = 1;
  bool timer_stop_ = false;
  std::shared_ptr<const RouterEvents> events_ = std::make_shared<const RouterEvents>();
  Clock::time_point timer_deadline_ = Clock::time_point::max();  // when the timer wakes

  std::mutex shutdown_mu_;  // serializes Shutdown calls
  std::thread timer_;
  WorkerThreads workers_;
  // Guarded by mu_ (the map; each Backend is thread safe, and may outlive its entry while a
  // worker or a reader still holds it). Declared last so that the Backends go first: their exit
  // callbacks may still take mu_ until their destructors return. A Backend is never destroyed
  // with mu_ held.
  std::map<std::string, std::shared_ptr<Backend>> backends_;
};

}  // namespace swapd
