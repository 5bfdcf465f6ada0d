// The Scheduler's memory side: what a model costs, what must stop before it runs (the group or
// matrix rules, then the memory budget), protection of `swappable: false` models, and the
// rebalance when a measured footprint turns out larger than expected.
#include <algorithm>
#include <limits>

#include "backends/scheduler.h"

namespace swapd {
namespace {

// Whole seconds from `now` to `until`, rounded up (0 when past).
int64_t SecondsLeft(SchedulerTime now, SchedulerTime until) {
  if (until <= now) return 0;
  return std::chrono::ceil<std::chrono::seconds>(until - now).count();
}

// Each model as `model "id"`, joined.
std::string Labels(const std::vector<std::string>& models) {
  std::string out;
  for (const auto& m : models) out += (out.empty() ? "" : ", ") + ModelLabel(m);
  return out;
}

}  // namespace

std::string Scheduler::ProtectedBy(const ModelState& m) const {
  if (m.phase == ModelPhase::kStopping || m.phase == ModelPhase::kStopped) return "";
  if (!m.swappable) return "swappable: false";
  if (m.min_residency.count() <= 0) return "";
  const std::string base = "minResidency: " + std::to_string(m.min_residency.count()) + " s";
  if (m.phase == ModelPhase::kStarting) return base + ", starting";
  const int64_t left = SecondsLeft(now_, m.resident_until);
  return left > 0 ? base + ", " + std::to_string(left) + " s left" : "";
}

Footprint Scheduler::Cost(const std::string& model) const {
  const ModelState* m = Find(model);
  if (m == nullptr) return Footprint{};
  return m->learned ? Larger(m->declared, *m->learned) : m->declared;
}

void Scheduler::SetFootprint(const std::string& model, const Footprint& learned) {
  ModelState* m = Find(model);
  if (m == nullptr) return;
  m->learned = learned;
  if (budget_.empty() || shutting_down_) return;
  Rebalance();
  Pump();
}

std::vector<ResidentModel> Scheduler::Residents(const std::string& model,
                                                const std::vector<std::string>& skip,
                                                bool evict_protected) const {
  std::vector<ResidentModel> resident;
  for (const auto& [id, m] : models_) {
    if (id == model || m.phase == ModelPhase::kStopped) continue;
    if (std::find(skip.begin(), skip.end(), id) != skip.end()) continue;
    ResidentModel r;
    r.model = id;
    r.cost = Cost(id);
    r.protected_by = ProtectedBy(m);
    r.protect = !r.protected_by.empty() && !evict_protected;
    r.evict_cost = matrix_ ? matrix_->config().EvictCost(id) : 1;
    r.last_used = m.idle_since.time_since_epoch().count();
    if (m.phase == ModelPhase::kStopping) {
      r.protect = false;  // going away anyway
      r.evict_cost = 0;
      r.last_used = std::numeric_limits<int64_t>::min();
    } else if (m.phase == ModelPhase::kStarting || m.in_flight > 0) {
      r.last_used = std::numeric_limits<int64_t>::max();
    }
    resident.push_back(std::move(r));
  }
  return resident;
}

Scheduler::Plan Scheduler::PlanFor(const std::string& model, MatrixDecision* decision,
                                   bool evict_protected) const {
  Plan plan;
  plan.evict = Evictions(model, decision);
  const ModelState& target = models_.at(model);
  // The budget weighs a model that is about to start; one already running was weighed then (a
  // larger measurement is the rebalance's business, never a reason to refuse its requests).
  if (!budget_.empty() && target.phase == ModelPhase::kStopped) {
    BudgetDecision d =
        FitToBudget(budget_, model, Cost(model), Residents(model, plan.evict, evict_protected));
    switch (d.verdict) {
      case BudgetDecision::Verdict::kFits:
        break;
      case BudgetDecision::Verdict::kEvict:
        plan.by_budget.insert(d.evict.begin(), d.evict.end());
        plan.evict.insert(plan.evict.end(), d.evict.begin(), d.evict.end());
        plan.budget_why = std::move(d.why);
        break;
      case BudgetDecision::Verdict::kTooBig:
        plan.refusal = Status::Error(ErrorCode::kUnavailable, d.why);
        return plan;
      case BudgetDecision::Verdict::kProtected:
        plan.protected_models = std::move(d.protected_models);
        plan.refusal = Status::Error(ErrorCode::kUnavailable, d.why);
        break;
    }
  }
  // The group or matrix rules may want a protected model gone too.
  std::vector<std::string> blocked;
  std::vector<ProtectedModel> reasons;
  if (!evict_protected) {
    for (const std::string& other : plan.evict) {
      std::string by = ProtectedBy(models_.at(other));
      if (!by.empty() && std::find(plan.protected_models.begin(), plan.protected_models.end(),
                                   other) == plan.protected_models.end()) {
        blocked.push_back(other);
        reasons.push_back({other, std::move(by)});
      }
    }
  }
  if (blocked.empty() && plan.protected_models.empty()) return plan;
  std::string why = plan.refusal.ok()
                        ? "it needs " + Labels(blocked) + " to stop (group or matrix rules), and " +
                              DescribeProtection(reasons)
                        : plan.refusal.message();
  plan.protected_models.insert(plan.protected_models.end(), blocked.begin(), blocked.end());
  plan.refusal =
      Status::Error(ErrorCode::kUnavailable,
                    ModelLabel(model) + " cannot be loaded now: " + why + "; retry later")
          .WithRetryAfter(RetryAfterSeconds(plan.protected_models));
  return plan;
}

Scheduler::Preview Scheduler::PreviewFor(const std::string& model) const {
  Preview preview;
  const ModelState* m = Find(model);
  if (m == nullptr) {
    preview.refusal = "unknown model " + ModelLabel(model);
    return preview;
  }
  preview.phase = m->phase;
  MatrixDecision decision;
  Plan plan = PlanFor(model, &decision);
  preview.evict = std::move(plan.evict);
  preview.by_budget = std::move(plan.by_budget);
  preview.budget_why = std::move(plan.budget_why);
  if (matrix_) preview.matrix = decision.Describe(model);
  if (!plan.refusal.ok()) preview.refusal = plan.refusal.message();
  return preview;
}

int Scheduler::RetryAfterSeconds(const std::vector<std::string>& protected_models) const {
  // Until the first protected model could go: the end of its residency (known exactly), else its
  // ttl (which counts from its last request: at most a minute), else a minute.
  int64_t best = std::numeric_limits<int64_t>::max();
  for (const std::string& p : protected_models) {
    const ModelState& m = models_.at(p);
    const int64_t left = !m.swappable                       ? 0
                         : m.phase == ModelPhase::kStarting ? m.min_residency.count()
                                                            : SecondsLeft(now_, m.resident_until);
    best = std::min<int64_t>(best, left > 0              ? left
                                   : m.Ttl().count() > 0 ? std::min<int64_t>(m.Ttl().count(), 60)
                                                         : 60);
  }
  return static_cast<int>(std::clamp<int64_t>(best, 1, 3600));
}

bool Scheduler::StartsBesideStops(const std::string& model,
                                  const std::vector<std::string>& evict) const {
  if (!overlap_swaps_ || budget_.empty()) return false;
  const ModelState& target = models_.at(model);
  // Known: declared or measured. An unknown model counts as 0, which is no reason to overlap.
  auto known = [](const ModelState& m) { return m.learned || m.declared != Footprint{}; };
  if (!known(target)) return false;
  for (const std::string& id : evict) {
    const ModelState& m = models_.at(id);
    if (m.phase != ModelPhase::kStopping || !known(m) || m.endpoint == target.endpoint) {
      return false;
    }
  }
  Footprint total = Cost(model);
  for (const auto& [id, m] : models_) {
    if (id != model && m.phase != ModelPhase::kStopped) total += Cost(id);
  }
  // Memory the budgets do not cover (RAM without `ram`, an unbudgeted GPU) could be short.
  if (total.ram > 0 && !budget_.ram) return false;
  for (const auto& [gpu, bytes] : total.vram) {
    if (bytes > 0 && budget_.vram.count(gpu) == 0) return false;
  }
  return !ExceedsBudget(budget_, total);
}

void Scheduler::Rebalance() {
  // The most recently used running model stays; the budget picks among the others.
  const std::string* keep = nullptr;
  Footprint total;
  int64_t newest = std::numeric_limits<int64_t>::min();
  for (const auto& [id, m] : models_) {
    if (m.phase == ModelPhase::kStopped || m.phase == ModelPhase::kStopping) continue;
    total += Cost(id);
    const int64_t used = (m.phase == ModelPhase::kStarting || m.in_flight > 0)
                             ? std::numeric_limits<int64_t>::max()
                             : m.idle_since.time_since_epoch().count();
    if (keep == nullptr || used > newest) {
      keep = &id;
      newest = used;
    }
  }
  if (keep == nullptr || !ExceedsBudget(budget_, total)) {
    for (auto& [id, m] : models_) m.over_budget_told = false;
    return;
  }
  ModelState& kept = models_.at(*keep);
  BudgetDecision d = FitToBudget(budget_, *keep, Cost(*keep), Residents(*keep, {}));
  if (d.verdict != BudgetDecision::Verdict::kEvict) {
    if (!kept.over_budget_told) {
      effects_->Explain(*keep, "running models exceed the memory budget: " + d.why);
    }
    kept.over_budget_told = true;
    return;
  }
  effects_->Explain(*keep, "after measuring, " + d.why);
  for (const std::string& other : d.evict) {
    ModelState& m = models_.at(other);
    if (m.phase == ModelPhase::kReady && m.in_flight == 0) IssueStop(other, StopReason::kBudget);
  }
}

}  // namespace swapd
