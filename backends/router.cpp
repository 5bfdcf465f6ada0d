#include "backends/router.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "backends/scheduler.h"
#include "backends/worker_threads.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;

// How often a waiting Acquire looks at its `cancelled` callback.
constexpr auto kCancelPollInterval = std::chrono::milliseconds(50);

std::string Quoted(const std::string& model) { return "model \"" + model + "\""; }

}  // namespace

// The Router's shared state. Leases hold it by shared_ptr, so it outlives the Router while a
// request is still in flight. Every event reaches the Scheduler under mu_; the Scheduler's
// effects run under mu_ too (they only record results, or hand Backend calls to worker threads).
// Backend methods are never called with mu_ held, except SetExitCallback on a new Backend.
class RouterImpl : public std::enable_shared_from_this<RouterImpl>, private SchedulerEffects {
 public:
  RouterImpl(std::shared_ptr<const Config> config, BackendFactory factory)
      : factory_(std::move(factory)), config_(std::move(config)), scheduler_(*config_, this) {}
  ~RouterImpl() override { Shutdown(); }

  // Starts the TTL timer thread; called once, right after construction.
  void StartTimer() {
    timer_ = std::thread([this] { TimerLoop(); });
  }

  Result<Lease> Acquire(const std::string& model_id, Clock::time_point deadline,
                        const std::function<bool()>& cancelled);
  void Finish(RequestId id) {
    std::lock_guard lock(mu_);
    scheduler_.RequestFinished(id, Clock::now());
    Changed();
  }
  void Unload(const std::string& model_id);
  void Preload() {
    std::lock_guard lock(mu_);
    scheduler_.Preload(config_->preload);
    Changed();
  }
  std::vector<ModelSnapshot> Snapshot() const;
  bool AwaitNotReady(const std::string& model_id, Clock::time_point deadline) {
    std::unique_lock lock(mu_);
    return changed_.wait_until(lock, deadline,
                               [&] { return scheduler_.Phase(model_id) != ModelPhase::kReady; });
  }
  void Shutdown();
  std::string LogTail(const std::string& model_id, size_t lines) const {
    std::shared_ptr<Backend> backend = FindBackend(model_id);
    return backend == nullptr ? std::string() : backend->LogTail(lines);
  }
  ConfigDiff Reconfigure(std::shared_ptr<const Config> config);
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
  void StopModel(const std::string& model) override;
  void Admit(RequestId request) override {
    if (auto it = waiters_.find(request); it != waiters_.end()) it->second.done = true;
  }
  void Reject(RequestId request, const Status& why) override {
    if (auto it = waiters_.find(request); it != waiters_.end()) it->second = Waiter{true, why};
  }

  // The model's Backend, made on first use; null without a factory. mu_ held.
  std::shared_ptr<Backend> BackendOf(const std::string& model);
  std::shared_ptr<Backend> FindBackend(const std::string& model) const {
    std::lock_guard lock(mu_);
    auto it = backends_.find(model);
    return it == backends_.end() ? nullptr : it->second;
  }
  void TimerLoop();
  // Why StopModel was asked to stop `model` (for RouterEvents::on_stop). mu_ held.
  const char* StopReason(const std::string& model) const {
    if (stop_context_ != nullptr && (stop_target_.empty() || stop_target_ == model)) {
      return stop_context_;
    }
    if (config_->models.count(model) == 0 || renew_backend_.count(model) != 0) return "reload";
    return "swap";
  }
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
  Scheduler scheduler_;
  // Models whose next start needs a new Backend (their definition changed, or they were
  // removed and added again by a reload).
  std::set<std::string> renew_backend_;
  std::map<RequestId, Waiter> waiters_;  // one per Acquire that has not returned yet
  RequestId next_request_ = 1;
  bool timer_stop_ = false;
  // While a Scheduler event that stops models for a known reason runs: that reason, and the
  // model it is about (empty: every model).
  const char* stop_context_ = nullptr;
  std::string stop_target_;
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

Result<Lease> RouterImpl::Acquire(const std::string& model_id, Clock::time_point deadline,
                                  const std::function<bool()>& cancelled) {
  std::unique_lock lock(mu_);
  const RequestId id = next_request_++;
  waiters_[id];
  scheduler_.RequestArrived(id, model_id);
  Changed();
  Status gave_up;
  for (;;) {
    if (waiters_.at(id).done) break;
    if (Clock::now() >= deadline) {
      gave_up = Status::Error(ErrorCode::kTimeout,
                              Quoted(model_id) + " was not ready before the request's deadline");
      break;
    }
    if (cancelled) {
      lock.unlock();  // the callback is the caller's code: never run it under our lock
      const bool gone = cancelled();
      lock.lock();
      if (waiters_.at(id).done) break;
      if (gone) {
        gave_up = Status::Error(ErrorCode::kUnavailable,
                                "request for " + Quoted(model_id) + " was cancelled");
        break;
      }
    }
    changed_.wait_until(lock, std::min(deadline, Clock::now() + kCancelPollInterval));
  }
  Waiter waiter = std::move(waiters_.at(id));
  waiters_.erase(id);
  const auto model = config_->models.find(model_id);
  if (!waiter.done) {
    // Still queued (admission and rejection happen under mu_), so this cannot fail.
    scheduler_.RequestWithdrawn(id);
    Changed();
    return gave_up;
  }
  if (!waiter.status.ok()) return waiter.status;
  if (model == config_->models.end()) {  // cannot happen: the Scheduler admits known models only
    scheduler_.RequestFinished(id, Clock::now());
    Changed();
    return Status::Error(ErrorCode::kNotFound, Quoted(model_id) + " not found");
  }
  Lease lease;
  lease.router_ = shared_from_this();
  lease.request_id_ = id;
  lease.model_id_ = model_id;
  lease.proxy_url_ = model->second.proxy;
  return lease;
}

void RouterImpl::Unload(const std::string& model_id) {
  std::unique_lock lock(mu_);
  // Every model that is not stopped now reaches kStopped once more before Unload returns.
  std::vector<std::pair<std::string, uint64_t>> stopping;
  for (const auto& [id, model] : config_->models) {
    if (!model_id.empty() && id != model_id) continue;
    if (scheduler_.Phase(id) != ModelPhase::kStopped) {
      stopping.emplace_back(id, scheduler_.StopsCompleted(id));
    }
  }
  if (!stopping.empty()) spdlog::info("unloading {}", model_id.empty() ? "all models" : model_id);
  stop_context_ = "unload";
  stop_target_ = model_id;
  scheduler_.Unload(model_id);
  stop_context_ = nullptr;
  Changed();
  changed_.wait(lock, [&] {
    return std::all_of(stopping.begin(), stopping.end(), [&](const auto& s) {
      return scheduler_.StopsCompleted(s.first) > s.second;
    });
  });
}

ConfigDiff RouterImpl::Reconfigure(std::shared_ptr<const Config> config) {
  std::lock_guard lock(mu_);
  ConfigDiff diff = DiffConfigs(*config_, *config);
  config_ = std::move(config);
  renew_backend_.insert(diff.added.begin(), diff.added.end());
  renew_backend_.insert(diff.changed.begin(), diff.changed.end());
  scheduler_.Reconfigure(*config_, diff.changed);
  Changed();
  return diff;
}

std::vector<ModelSnapshot> RouterImpl::Snapshot() const {
  std::vector<ModelSnapshot> out;
  std::vector<std::shared_ptr<Backend>> backends;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, backend] : backends_) {
      // A model a reload removed is listed until its process is gone.
      if (config_->models.count(id) == 0 && scheduler_.Phase(id) != ModelPhase::kStopped) {
        ModelSnapshot s;
        s.id = id;
        s.in_flight = scheduler_.InFlight(id);
        out.push_back(std::move(s));
        backends.push_back(backend);
      }
    }
    for (const auto& [id, model] : config_->models) {
      ModelSnapshot s;
      s.id = id;
      s.in_flight = scheduler_.InFlight(id);
      s.queued = scheduler_.Queued(id);
      out.push_back(std::move(s));
      auto it = backends_.find(id);
      backends.push_back(it == backends_.end() ? nullptr : it->second);
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (backends[i] != nullptr) out[i].backend = backends[i]->Info();
  }
  return out;
}

void RouterImpl::Shutdown() {
  std::lock_guard serial(shutdown_mu_);
  {
    std::unique_lock lock(mu_);
    stop_context_ = "shutdown";
    stop_target_.clear();
    scheduler_.Shutdown();
    stop_context_ = nullptr;
    Changed();
    // Backend::Stop is bounded by the model's unloadTimeout, so this wait is too.
    changed_.wait(lock, [&] { return scheduler_.AllStopped(); });
    timer_stop_ = true;
    timer_wake_.notify_all();
  }
  if (timer_.joinable()) timer_.join();
  workers_.JoinAll();
}

void RouterImpl::StartModel(const std::string& model) {
  std::shared_ptr<Backend> old;  // a stopped Backend of the model's previous definition
  if (renew_backend_.erase(model) != 0) {
    if (auto it = backends_.find(model); it != backends_.end()) {
      old = std::move(it->second);
      backends_.erase(it);
    }
  }
  std::shared_ptr<Backend> backend = BackendOf(model);
  spdlog::info("model {}: starting", model);
  workers_.Run([this, backend, model, old = std::move(old), events = events_]() mutable {
    old.reset();  // destroyed here, without mu_
    if (events->on_start) events->on_start(model);
    const auto began = Clock::now();
    Status result = backend != nullptr
                        ? backend->Start()
                        : Status::Error(ErrorCode::kInternal, "no backend could be made for it");
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - began).count();
    if (result.ok()) {
      spdlog::info("model {}: ready in {} ms", model, ms);
    } else {
      spdlog::warn("model {}: start failed after {} ms: {}", model, ms, result.message());
    }
    if (events->on_start_finished)
      events->on_start_finished(model, result.ok(), Clock::now() - began);
    std::lock_guard lock(mu_);
    scheduler_.StartFinished(model, result, Clock::now());
    Changed();
  });
}

void RouterImpl::StopModel(const std::string& model) {
  std::shared_ptr<Backend> backend = BackendOf(model);
  spdlog::info("model {}: stopping", model);
  workers_.Run([this, backend, model, events = events_, reason = StopReason(model)] {
    if (events->on_stop) events->on_stop(model, reason);
    if (backend != nullptr) backend->Stop();
    spdlog::info("model {}: stopped", model);
    std::lock_guard lock(mu_);
    scheduler_.StopFinished(model);
    Changed();
  });
}

std::shared_ptr<Backend> RouterImpl::BackendOf(const std::string& model) {
  std::shared_ptr<Backend>& backend = backends_[model];
  if (backend || !factory_) return backend;  // no factory: starts fail, stops are no-ops
  auto definition = config_->models.find(model);
  if (definition == config_->models.end()) return nullptr;  // removed before it ever ran
  backend = factory_(definition->second, *config_);
  if (backend) {
    backend->SetExitCallback([this, model, self = backend.get()](const std::string& reason) {
      spdlog::warn("model {}: backend exited: {}", model, reason);
      std::unique_lock lock(mu_);
      auto current = backends_.find(model);
      if (current == backends_.end() || current->second.get() != self) return;  // replaced
      const bool crashed = scheduler_.Phase(model) == ModelPhase::kReady;
      std::shared_ptr<const RouterEvents> events = events_;
      scheduler_.BackendExited(model);
      Changed();
      lock.unlock();
      if (crashed && events->on_crash) events->on_crash(model);
    });
  }
  return backend;
}

void RouterImpl::TimerLoop() {
  std::unique_lock lock(mu_);
  while (!timer_stop_) {
    timer_deadline_ = scheduler_.NextDeadline().value_or(Clock::time_point::max());
    if (timer_deadline_ == Clock::time_point::max()) {
      timer_wake_.wait(lock);
    } else {
      timer_wake_.wait_until(lock, timer_deadline_);
    }
    if (timer_stop_) break;
    stop_context_ = "ttl";
    stop_target_.clear();
    scheduler_.Tick(Clock::now());
    stop_context_ = nullptr;
    changed_.notify_all();
  }
}

// ---- Lease

Lease::Lease(Lease&& other) noexcept
    : router_(std::move(other.router_)),
      request_id_(other.request_id_),
      model_id_(std::move(other.model_id_)),
      proxy_url_(std::move(other.proxy_url_)) {}

Lease& Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    Release();
    router_ = std::move(other.router_);
    request_id_ = other.request_id_;
    model_id_ = std::move(other.model_id_);
    proxy_url_ = std::move(other.proxy_url_);
  }
  return *this;
}

Lease::~Lease() { Release(); }

void Lease::Release() {
  if (router_) {
    router_->Finish(request_id_);
    router_.reset();
  }
}

// ---- Router

Router::Router(std::shared_ptr<const Config> config, BackendFactory factory)
    : impl_(std::make_shared<RouterImpl>(std::move(config), std::move(factory))) {
  impl_->StartTimer();
}

Router::~Router() { impl_->Shutdown(); }

Result<Lease> Router::Acquire(const std::string& model_id,
                              std::chrono::steady_clock::time_point deadline,
                              std::function<bool()> cancelled) {
  return impl_->Acquire(model_id, deadline, cancelled);
}

void Router::Unload(const std::string& model_id) { impl_->Unload(model_id); }
void Router::Preload() { impl_->Preload(); }
std::vector<ModelSnapshot> Router::Snapshot() const { return impl_->Snapshot(); }
bool Router::AwaitNotReady(const std::string& model_id,
                           std::chrono::steady_clock::time_point deadline) {
  return impl_->AwaitNotReady(model_id, deadline);
}
void Router::SetEvents(RouterEvents events) { impl_->SetEvents(std::move(events)); }
void Router::Shutdown() { impl_->Shutdown(); }
std::string Router::LogTail(const std::string& model_id, size_t lines) const {
  return impl_->LogTail(model_id, lines);
}
ConfigDiff Router::Reconfigure(std::shared_ptr<const Config> config) {
  return impl_->Reconfigure(std::move(config));
}

}  // namespace swapd
