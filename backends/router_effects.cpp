// What the Scheduler's decisions do: backends started and stopped on worker threads (never under
// the Router's lock), the exit callback of each Backend, and the TTL timer.
#include <spdlog/spdlog.h>

#include <utility>

#include "backends/router_impl.h"

namespace swapd {

void RouterImpl::StartModel(const std::string& model) {
  std::shared_ptr<Backend> old;  // a stopped Backend of the model's previous definition
  if (renew_backend_.erase(model) != 0) {
    if (auto it = backends_.find(model); it != backends_.end()) {
      old = std::move(it->second);
      backends_.erase(it);
    }
  }
  std::shared_ptr<Backend> backend = BackendOf(model);
  last_exit_.erase(model);
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
    const std::string live_proxy = result.ok() ? backend->Info().proxy : std::string();
    std::lock_guard lock(mu_);
    if (result.ok()) {
      last_load_[model] = std::chrono::milliseconds(ms);
      FollowProxy(model, live_proxy);
    }
    scheduler_.StartFinished(model, result, Clock::now());
    Changed();
  });
}

void RouterImpl::FollowProxy(const std::string& model, const std::string& live_proxy) {
  auto definition = config_->models.find(model);
  if (live_proxy.empty() || definition == config_->models.end()) return;
  auto moved = moved_proxies_.find(model);
  const std::string& now = moved != moved_proxies_.end() ? moved->second : definition->second.proxy;
  if (live_proxy == now) return;  // the usual case: nothing to parse
  if (live_proxy == definition->second.proxy) {
    moved_proxies_.erase(model);
  } else {
    moved_proxies_[model] = live_proxy;
  }
  proxy_urls_[model] = std::make_shared<const ProxyUrl>(ParseProxyUrl(live_proxy));
}

void RouterImpl::StopModel(const std::string& model, StopReason why) {
  std::shared_ptr<Backend> backend = BackendOf(model);
  spdlog::info("model {}: stopping ({})", model, ToString(why));
  last_exit_[model] = std::string("backend stopping (") + ToString(why) + ")";
  workers_.Run([this, backend, model, events = events_, reason = ToString(why)] {
    if (events->on_stop) events->on_stop(model, reason);
    if (backend != nullptr) backend->Stop();
    spdlog::info("model {}: stopped", model);
    std::lock_guard lock(mu_);
    scheduler_.StopFinished(model);
    Changed();
  });
}

void RouterImpl::Explain(const std::string& model, const std::string& why) {
  (void)model;  // the text names it
  spdlog::info("{}", why);
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
      if (crashed) last_exit_[model] = "backend exited: " + reason;
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
    scheduler_.Tick(Clock::now());
    changed_.notify_all();
  }
}

}  // namespace swapd
