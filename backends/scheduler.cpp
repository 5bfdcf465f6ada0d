#include "backends/scheduler.h"

#include <algorithm>
#include <utility>

#include "backends/scheduler_policy.h"

namespace swapd {

const char* ToString(ModelPhase phase) {
  switch (phase) {
    case ModelPhase::kStopped:
      return "stopped";
    case ModelPhase::kStarting:
      return "starting";
    case ModelPhase::kReady:
      return "ready";
    case ModelPhase::kStopping:
      return "stopping";
  }
  return "unknown";
}

const char* ToString(StopReason reason) {
  switch (reason) {
    case StopReason::kGroup:
      return "group";
    case StopReason::kMatrix:
      return "matrix";
    case StopReason::kBudget:
      return "budget";
    case StopReason::kTtl:
      return "ttl";
    case StopReason::kUnload:
      return "unload";
    case StopReason::kReload:
      return "reload";
    case StopReason::kShutdown:
      return "shutdown";
  }
  return "unknown";
}

Scheduler::Scheduler(const Config& config, SchedulerEffects* effects) : effects_(effects) {
  Configure(config);
}

void Scheduler::Configure(const Config& config) {
  auto conflicts = config.matrix ? ComputeMatrixConflicts(config) : ComputeConflicts(config);
  if (config.matrix) {
    matrix_.emplace(*config.matrix);
  } else {
    matrix_.reset();
  }
  budget_ = config.memory.budget;
  wait_for_protected_ = config.memory.wait_for_protected;
  overlap_swaps_ = config.memory.overlap_swaps;
  for (auto& [id, m] : models_) {
    if (config.models.count(id) == 0) {
      m.retired = true;
      m.conflicts.clear();
    }
  }
  for (const auto& [id, model] : config.models) {
    ModelState& m = models_[id];
    m.retired = false;
    m.concurrency_limit = model.concurrency_limit;
    m.ttl = model.ttl;
    m.priority = model.priority;
    m.conflicts = std::move(conflicts[id]);
    m.declared = FootprintOf(model.memory);
    m.swappable = model.swappable;
    m.min_residency = model.min_residency;
    m.endpoint = model.proxy;
  }
}

// ---- Events

void Scheduler::RequestArrived(RequestId id, const std::string& model, bool evict_protected) {
  if (shutting_down_) {
    effects_->Reject(id, Status::Error(ErrorCode::kUnavailable, "swapd is shutting down"));
    return;
  }
  ModelState* m = Find(model);
  if (m == nullptr || m->retired) {
    effects_->Reject(id, Status::Error(ErrorCode::kNotFound, ModelLabel(model) + " not found"));
    return;
  }
  if (m->concurrency_limit > 0 && m->in_flight >= m->concurrency_limit) {
    effects_->Reject(id, Status::Error(ErrorCode::kTooManyRequests,
                                       ModelLabel(model) + ": concurrency limit " +
                                           std::to_string(m->concurrency_limit) + " reached"));
    return;
  }
  auto batch = FindBatch(model);
  if (batch == queue_.end() && m->phase == ModelPhase::kReady && !m->stale &&
      PlanFor(model, nullptr, evict_protected).evict.empty()) {
    // The fast path: the model serves now unless a queued swap waits for it to stop, in which
    // case it may still skip the queue a bounded number of times.
    const bool blocked = BlockedByQueue(model, queue_.end());
    if (!blocked || m->bypassed < kMaxBypass) {
      m->bypassed = blocked ? m->bypassed + 1 : 0;
      Admit(*m, model, id);
      return;
    }
  }
  if (batch == queue_.end()) batch = Enqueue(Batch{model, {}, false});
  batch->requests.push_back(id);
  batch->evict_protected = batch->evict_protected || evict_protected;
  queued_[id] = model;
  Pump();
}

bool Scheduler::RequestWithdrawn(RequestId id) {
  auto q = queued_.find(id);
  if (q == queued_.end()) return false;
  auto batch = FindBatch(q->second);
  queued_.erase(q);
  if (batch != queue_.end()) {
    batch->requests.remove(id);
    if (batch->requests.empty() && !batch->preload) queue_.erase(batch);
  }
  Pump();
  return true;
}

void Scheduler::RequestFinished(RequestId id, SchedulerTime now) {
  auto a = admitted_.find(id);
  if (a == admitted_.end()) return;
  ModelState& m = models_.at(a->second.model);
  const bool detached = a->second.epoch != m.epoch;
  admitted_.erase(a);
  now_ = std::max(now_, now);
  if (detached) return;
  if (--m.in_flight == 0) m.idle_since = now;
  Pump();
}

void Scheduler::StartFinished(const std::string& model, const Status& result, SchedulerTime now) {
  ModelState* m = Find(model);
  now_ = std::max(now_, now);
  if (m == nullptr || !m->start_pending) return;
  m->start_pending = false;
  if (m->phase == ModelPhase::kStopping) {
    // A stop cancelled this start; its waiters stay queued and start the model again.
    if (!m->stop_pending) BecomeStopped(*m);
  } else if (result.ok()) {
    m->phase = ModelPhase::kReady;
    m->idle_since = now;
    m->resident_until = now + m->min_residency;
    m->bypassed = 0;
  } else {
    m->phase = ModelPhase::kStopped;
    m->residency_ttl.reset();
    auto batch = FindBatch(model);
    if (batch != queue_.end()) {
      // Name the model once: a Backend's message usually does already.
      std::string why = result.message();
      if (why.rfind(ModelLabel(model), 0) != 0)
        why = ModelLabel(model) + " failed to start: " + why;
      RejectBatch(*batch, Status::Error(ErrorCode::kBackendFailed, why));
      queue_.erase(batch);
    }
  }
  Pump();
}

void Scheduler::StopFinished(const std::string& model) {
  ModelState* m = Find(model);
  if (m == nullptr || !m->stop_pending) return;
  m->stop_pending = false;
  if (!m->start_pending) BecomeStopped(*m);
  Pump();
}

void Scheduler::BackendExited(const std::string& model) {
  ModelState* m = Find(model);
  if (m == nullptr || m->phase != ModelPhase::kReady) return;
  BecomeStopped(*m);
  Pump();
}

void Scheduler::Unload(const std::string& model) {
  for (auto& [id, m] : models_) {
    if (!model.empty() && id != model) continue;
    if (m.phase == ModelPhase::kReady || m.phase == ModelPhase::kStarting) {
      IssueStop(id, StopReason::kUnload);
    }
    // An unload overrides a preload that has not happened yet; requests still wait.
    if (auto batch = FindBatch(id); batch != queue_.end()) {
      batch->preload = false;
      if (batch->requests.empty()) queue_.erase(batch);
    }
  }
  Pump();
}

void Scheduler::Preload(const std::vector<std::string>& models) {
  if (shutting_down_) return;
  for (const std::string& id : models) {
    const ModelState* m = Find(id);
    if (m == nullptr || m->retired) continue;
    auto batch = FindBatch(id);
    if (batch == queue_.end()) {
      Enqueue(Batch{id, {}, true});
    } else {
      batch->preload = true;
    }
  }
  Pump();
}

void Scheduler::SetResidencyTtl(const std::string& model, std::chrono::seconds ttl) {
  ModelState* m = Find(model);
  if (m == nullptr || (m->phase != ModelPhase::kStarting && m->phase != ModelPhase::kReady)) return;
  m->residency_ttl = ttl.count() > 0 ? ttl : std::chrono::seconds(0);
}

void Scheduler::Tick(SchedulerTime now) {
  if (shutting_down_) return;
  SetNow(now);
  for (auto& [id, m] : models_) {
    if (m.phase != ModelPhase::kReady || m.in_flight != 0 || m.Ttl().count() <= 0) continue;
    if (FindBatch(id) != queue_.end()) continue;
    if (m.idle_since + m.Ttl() <= now) IssueStop(id, StopReason::kTtl);
  }
}

void Scheduler::SetNow(SchedulerTime now) {
  if (now <= now_) return;
  const SchedulerTime before = std::exchange(now_, now);
  bool residency_ended = false;
  for (const auto& [id, m] : models_) {
    if (m.phase == ModelPhase::kReady && m.resident_until > before && m.resident_until <= now_) {
      residency_ended = true;
    }
  }
  if (residency_ended && !queue_.empty() && !shutting_down_) Pump();
}

void Scheduler::Reconfigure(const Config& config, const std::set<std::string>& restart) {
  if (shutting_down_) return;
  Configure(config);
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (models_.at(it->model).retired) {
      RejectBatch(*it,
                  Status::Error(ErrorCode::kNotFound,
                                ModelLabel(it->model) + " was removed from the configuration"));
      it = queue_.erase(it);
    } else {
      ++it;
    }
  }
  for (const std::string& id : restart) {
    ModelState* m = Find(id);
    if (m != nullptr) m->learned.reset();  // a new definition: what was measured no longer holds
    if (m == nullptr || m->retired || m->phase == ModelPhase::kStopped) continue;
    m->stale = true;
    // A start of the old definition has no request in flight yet: cancel it now.
    if (m->phase == ModelPhase::kStarting) IssueStop(id, StopReason::kReload);
  }
  Pump();
}

void Scheduler::Shutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  for (Batch& b : queue_) {
    RejectBatch(b, Status::Error(ErrorCode::kUnavailable, "swapd is shutting down"));
  }
  queue_.clear();
  for (auto& [id, m] : models_) {
    if (m.phase == ModelPhase::kReady || m.phase == ModelPhase::kStarting) {
      IssueStop(id, StopReason::kShutdown);
    }
  }
}

// ---- Decisions (the queue walk: scheduler_queue.cpp)

void Scheduler::IssueStart(const std::string& model) {
  ModelState& m = models_.at(model);
  m.phase = ModelPhase::kStarting;
  m.start_pending = true;
  effects_->StartModel(model);
}

void Scheduler::Admit(ModelState& m, const std::string& model, RequestId id) {
  ++m.in_flight;
  admitted_[id] = Admission{model, m.epoch};
  effects_->Admit(id);
}

void Scheduler::IssueStop(const std::string& model, StopReason reason) {
  ModelState& m = models_.at(model);
  m.phase = ModelPhase::kStopping;
  m.stop_pending = true;
  effects_->StopModel(model, reason);
}

void Scheduler::BecomeStopped(ModelState& m) {
  m.phase = ModelPhase::kStopped;
  m.residency_ttl.reset();
  m.in_flight = 0;
  ++m.epoch;
  m.bypassed = 0;
  m.stale = false;
  ++m.stops_completed;
}

std::list<Scheduler::Batch>::iterator Scheduler::FindBatch(const std::string& model) {
  return std::find_if(queue_.begin(), queue_.end(),
                      [&](const Batch& b) { return b.model == model; });
}

void Scheduler::RejectBatch(Batch& b, const Status& why) {
  for (RequestId id : b.requests) {
    queued_.erase(id);
    effects_->Reject(id, why);
  }
  b.requests.clear();
}

Scheduler::ModelState* Scheduler::Find(const std::string& model) {
  auto it = models_.find(model);
  return it == models_.end() ? nullptr : &it->second;
}

const Scheduler::ModelState* Scheduler::Find(const std::string& model) const {
  auto it = models_.find(model);
  return it == models_.end() ? nullptr : &it->second;
}

}  // namespace swapd
