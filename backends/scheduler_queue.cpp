// The Scheduler's queue walk: which batch may advance, what must stop first (groups' conflicts
// or the matrix solver's choice), and where a new batch queues (FIFO with priorities).
#include <algorithm>
#include <limits>

#include "backends/scheduler.h"

namespace swapd {

void Scheduler::Pump() {
  if (shutting_down_) return;
  StopDrained();
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (!BlockedByQueue(it->model, it) && Advance(*it) && it->requests.empty()) {
      it = queue_.erase(it);  // served
    } else {
      ++it;
    }
  }
}

void Scheduler::StopDrained() {
  for (auto& [id, m] : models_) {
    if ((m.stale || m.retired) && m.phase == ModelPhase::kReady && m.in_flight == 0) {
      IssueStop(id, StopReason::kReload);
    }
  }
}

bool Scheduler::Advance(Batch& b) {
  ModelState& target = models_.at(b.model);
  MatrixDecision decision;
  const Plan plan = PlanFor(b.model, &decision, b.evict_protected);
  const bool loading = target.phase == ModelPhase::kStopped && !target.stale;
  if (matrix_ && !b.explained && loading) effects_->Explain(b.model, decision.Describe(b.model));
  if (!plan.refusal.ok()) {
    if (!plan.protected_models.empty() && wait_for_protected_) {
      if (!b.explained) effects_->Explain(b.model, plan.refusal.message() + " (waiting)");
      b.explained = true;
      return false;  // waits for the protected model to stop on its own, or for its deadline
    }
    effects_->Explain(b.model, plan.refusal.message());
    RejectBatch(b, plan.refusal);
    b.preload = false;
    return true;  // served: with no request left, the batch is dropped
  }
  if (!plan.by_budget.empty() && !b.explained && loading) {
    effects_->Explain(b.model, plan.budget_why);
  }
  if (loading) b.explained = true;
  // Every eviction is issued at once: the stops run in parallel.
  for (const std::string& other_id : plan.evict) {
    ModelState& other = models_.at(other_id);
    // Never stop a model with requests in flight: its last RequestFinished pumps again.
    if (other.phase == ModelPhase::kReady && other.in_flight == 0) {
      if (std::string by = ProtectedBy(other); !by.empty()) {
        effects_->Explain(b.model, "model \"" + other_id + "\" (" + by +
                                       ") is stopped for a request with a key of "
                                       "memory.evictProtectedKeys");
      }
      IssueStop(other_id, plan.by_budget.count(other_id) != 0 ? StopReason::kBudget
                          : matrix_                           ? StopReason::kMatrix
                                                              : StopReason::kGroup);
    }
  }
  const bool clear = plan.evict.empty() || StartsBesideStops(b.model, plan.evict);
  if (!clear || target.stale) return false;  // a stale model restarts once it has stopped
  if (target.phase == ModelPhase::kStopped) IssueStart(b.model);
  if (target.phase != ModelPhase::kReady) return false;
  while (!b.requests.empty() &&
         (target.concurrency_limit <= 0 || target.in_flight < target.concurrency_limit)) {
    RequestId id = b.requests.front();
    b.requests.pop_front();
    queued_.erase(id);
    Admit(target, b.model, id);
  }
  return true;
}

// True when a batch before `end` wants the opposite of what running `model` needs: to stop
// `model`, or to run a model that `model` stops.
bool Scheduler::BlockedByQueue(const std::string& model,
                               std::list<Batch>::const_iterator end) const {
  const std::set<std::string>& stops = models_.at(model).conflicts;
  for (auto it = queue_.begin(); it != end; ++it) {
    if (it->model == model) continue;
    if (stops.count(it->model) != 0 || models_.at(it->model).conflicts.count(model) != 0) {
      return true;
    }
  }
  return false;
}

std::vector<std::string> Scheduler::Evictions(const std::string& model,
                                              MatrixDecision* decision) const {
  std::vector<std::string> evict;
  if (!matrix_) {
    for (const std::string& other : models_.at(model).conflicts) {
      if (models_.at(other).phase != ModelPhase::kStopped) evict.push_back(other);
    }
    return evict;
  }
  std::vector<MatrixResident> running;
  for (const auto& [id, m] : models_) {
    if (id == model || m.phase == ModelPhase::kStopped) continue;
    MatrixResident r{id, matrix_->config().EvictCost(id), m.idle_since.time_since_epoch().count()};
    if (m.phase == ModelPhase::kStopping) {
      r.cost = 0;  // going away anyway
      r.last_used = std::numeric_limits<int64_t>::min();
    } else if (m.phase == ModelPhase::kStarting || m.in_flight > 0) {
      r.last_used = std::numeric_limits<int64_t>::max();
    }
    running.push_back(std::move(r));
  }
  MatrixDecision d = matrix_->Choose(model, running);
  evict = d.evict;
  if (decision != nullptr) *decision = std::move(d);
  return evict;
}

std::list<Scheduler::Batch>::iterator Scheduler::Enqueue(Batch batch) {
  const int64_t priority = models_.at(batch.model).priority;
  // Ahead of waiting batches of a lower priority only: one whose model already starts or runs
  // keeps its place, so that its load is not wasted.
  auto it = std::find_if(queue_.begin(), queue_.end(), [&](const Batch& queued) {
    const ModelState& m = models_.at(queued.model);
    return m.priority < priority && m.phase == ModelPhase::kStopped;
  });
  return queue_.insert(it, std::move(batch));
}

}  // namespace swapd
