#include "backends/router.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "backends/residency_capacity.h"
#include "backends/router_impl.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;

// How often a waiting Acquire looks at its `cancelled` callback.
constexpr auto kCancelPollInterval = std::chrono::milliseconds(50);

}  // namespace

std::map<std::string, std::shared_ptr<const ProxyUrl>> RouterImpl::ParseProxyUrls(
    const Config& config) {
  std::map<std::string, std::shared_ptr<const ProxyUrl>> urls;
  for (const auto& [id, model] : config.models) {
    urls.emplace(id, std::make_shared<const ProxyUrl>(ParseProxyUrl(model.proxy)));
  }
  return urls;
}

Result<Lease> RouterImpl::Acquire(const std::string& model_id, Clock::time_point deadline,
                                  const std::function<bool()>& cancelled, bool evict_protected) {
  std::unique_lock lock(mu_);
  const RequestId id = next_request_++;
  waiters_[id];
  scheduler_.SetNow(Clock::now());
  scheduler_.RequestArrived(id, model_id, evict_protected);
  Changed();
  Status gave_up;
  for (;;) {
    if (waiters_.at(id).done) break;
    if (Clock::now() >= deadline) {
      gave_up =
          Status::Error(ErrorCode::kTimeout,
                        ModelLabel(model_id) + " was not ready before the request's deadline");
      break;
    }
    if (cancelled) {
      lock.unlock();  // the callback is the caller's code: never run it under our lock
      const bool gone = cancelled();
      lock.lock();
      if (waiters_.at(id).done) break;
      if (gone) {
        gave_up = Status::Error(ErrorCode::kUnavailable,
                                "request for " + ModelLabel(model_id) + " was cancelled");
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
    return Status::Error(ErrorCode::kNotFound, ModelLabel(model_id) + " not found");
  }
  Lease lease;
  lease.router_ = shared_from_this();
  lease.request_id_ = id;
  lease.model_id_ = model_id;
  lease.proxy_url_ = proxy_urls_.at(model_id);
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
  scheduler_.Unload(model_id);
  Changed();
  changed_.wait(lock, [&] {
    return std::all_of(stopping.begin(), stopping.end(), [&](const auto& s) {
      return scheduler_.StopsCompleted(s.first) > s.second;
    });
  });
}

void RouterImpl::BeginUnload(const std::string& model_id) {
  std::lock_guard lock(mu_);
  if (scheduler_.Phase(model_id) != ModelPhase::kStopped) spdlog::info("unloading {}", model_id);
  scheduler_.Unload(model_id);
  Changed();
}

void RouterImpl::SetResidencyTtl(const std::string& model_id, std::chrono::seconds ttl) {
  std::lock_guard lock(mu_);
  scheduler_.SetResidencyTtl(model_id, ttl);
  Changed();  // the timer may now be due earlier
}

void RouterImpl::SetExpectedLoad(const std::string& model_id, std::chrono::milliseconds expected) {
  std::lock_guard lock(mu_);
  expected_load_[model_id] = expected;
}

int RouterImpl::QueuePosition(const std::string& model_id) const {
  std::lock_guard lock(mu_);
  return scheduler_.QueuePosition(model_id);
}

ConfigDiff RouterImpl::Reconfigure(std::shared_ptr<const Config> config) {
  std::lock_guard lock(mu_);
  ConfigDiff diff = DiffConfigs(*config_, *config);
  config_ = std::move(config);
  proxy_urls_ = ParseProxyUrls(*config_);
  // A backend that keeps running keeps its port; a changed one starts again and tells its own.
  for (auto it = moved_proxies_.begin(); it != moved_proxies_.end();) {
    if (diff.unchanged.count(it->first) != 0) {
      proxy_urls_[it->first] = std::make_shared<const ProxyUrl>(ParseProxyUrl(it->second));
      ++it;
    } else {
      it = moved_proxies_.erase(it);
    }
  }
  renew_backend_.insert(diff.added.begin(), diff.added.end());
  renew_backend_.insert(diff.changed.begin(), diff.changed.end());
  for (const std::string& id : diff.changed) {
    last_load_.erase(id);
    expected_load_.erase(id);
  }
  scheduler_.Reconfigure(*config_, diff.changed);
  max_resident_.reset();
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
      s.cost = scheduler_.Cost(id);
      s.ttl = scheduler_.TtlInForce(id);
      s.idle_deadline = scheduler_.IdleDeadline(id);
      if (auto e = expected_load_.find(id); e != expected_load_.end()) {
        s.expected_load = e->second;
      }
      if (auto load = last_load_.find(id); load != last_load_.end()) {
        s.last_load = load->second;
        if (s.expected_load.count() == 0) s.expected_load = load->second;
      }
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

int RouterImpl::MaxResident() const {
  std::lock_guard lock(mu_);
  if (!max_resident_) {
    std::map<std::string, Footprint> costs;
    for (const auto& [id, model] : config_->models) costs[id] = scheduler_.Cost(id);
    max_resident_ = MaxResidentModels(*config_, costs, scheduler_.budget());
  }
  return *max_resident_;
}

std::string RouterImpl::AwaitFailure(const std::string& model_id, Clock::time_point deadline) {
  std::unique_lock lock(mu_);
  // The exit callback records the reason and turns the phase under mu_, in one step.
  if (!changed_.wait_until(lock, deadline,
                           [&] { return scheduler_.Phase(model_id) != ModelPhase::kReady; })) {
    return "";
  }
  auto it = last_exit_.find(model_id);
  return it == last_exit_.end() ? std::string() : it->second;
}

void RouterImpl::Shutdown() {
  std::lock_guard serial(shutdown_mu_);
  {
    std::unique_lock lock(mu_);
    scheduler_.Shutdown();
    Changed();
    // Backend::Stop is bounded by the model's unloadTimeout, so this wait is too.
    changed_.wait(lock, [&] { return scheduler_.AllStopped(); });
    timer_stop_ = true;
    timer_wake_.notify_all();
  }
  if (timer_.joinable()) timer_.join();
  workers_.JoinAll();
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
                              std::function<bool()> cancelled, bool evict_protected) {
  return impl_->Acquire(model_id, deadline, cancelled, evict_protected);
}

void Router::Unload(const std::string& model_id) { impl_->Unload(model_id); }
void Router::Preload() { impl_->Preload(); }
void Router::Load(const std::string& model_id) { impl_->Load(model_id); }
void Router::BeginUnload(const std::string& model_id) { impl_->BeginUnload(model_id); }
void Router::SetResidencyTtl(const std::string& model_id, std::chrono::seconds ttl) {
  impl_->SetResidencyTtl(model_id, ttl);
}
std::vector<ModelSnapshot> Router::Snapshot() const { return impl_->Snapshot(); }
bool Router::IsReady(const std::string& model_id) const { return impl_->IsReady(model_id); }
bool Router::AwaitNotReady(const std::string& model_id,
                           std::chrono::steady_clock::time_point deadline) {
  return impl_->AwaitNotReady(model_id, deadline);
}
void Router::SetExpectedLoad(const std::string& model_id, std::chrono::milliseconds expected) {
  impl_->SetExpectedLoad(model_id, expected);
}
int Router::QueuePosition(const std::string& model_id) const {
  return impl_->QueuePosition(model_id);
}
void Router::SetFootprint(const std::string& model_id, const Footprint& learned) {
  impl_->SetFootprint(model_id, learned);
}
MemoryAmount Router::Budget() const { return impl_->Budget(); }
int Router::MaxResident() const { return impl_->MaxResident(); }
Scheduler::Preview Router::Preview(const std::string& model_id) { return impl_->Preview(model_id); }
void Router::SetEvents(RouterEvents events) { impl_->SetEvents(std::move(events)); }
void Router::Shutdown() { impl_->Shutdown(); }
std::string Router::AwaitFailure(const std::string& model_id,
                                 std::chrono::steady_clock::time_point deadline) {
  return impl_->AwaitFailure(model_id, deadline);
}

std::string Router::LogTail(const std::string& model_id, size_t lines) const {
  return impl_->LogTail(model_id, lines);
}
ConfigDiff Router::Reconfigure(std::shared_ptr<const Config> config) {
  return impl_->Reconfigure(std::move(config));
}

}  // namespace swapd
