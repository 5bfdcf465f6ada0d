// The Scheduler's queries: what the dashboard, the API and the TTL timer read of its state. None
// changes anything.
#include <algorithm>

#include "backends/scheduler.h"

namespace swapd {

std::optional<SchedulerTime> Scheduler::NextDeadline() const {
  std::optional<SchedulerTime> next;
  if (shutting_down_) return next;
  for (const auto& [id, m] : models_) {
    if (m.phase == ModelPhase::kReady && m.resident_until > now_ &&
        (!next || m.resident_until < *next)) {
      next = m.resident_until;
    }
    std::optional<SchedulerTime> due = IdleDue(id, m);
    if (due && (!next || *due < *next)) next = due;
  }
  return next;
}

std::optional<SchedulerTime> Scheduler::IdleDue(const std::string& model,
                                                const ModelState& m) const {
  if (m.phase != ModelPhase::kReady || m.in_flight != 0 || m.Ttl().count() <= 0) return {};
  if (std::any_of(queue_.begin(), queue_.end(),
                  [&model](const Batch& b) { return b.model == model; })) {
    return {};
  }
  return m.idle_since + m.Ttl();
}

std::chrono::seconds Scheduler::TtlInForce(const std::string& model) const {
  const ModelState* m = Find(model);
  return m == nullptr ? std::chrono::seconds(0) : std::max(m->Ttl(), std::chrono::seconds(0));
}

std::optional<SchedulerTime> Scheduler::IdleDeadline(const std::string& model) const {
  const ModelState* m = Find(model);
  if (m == nullptr || shutting_down_) return {};
  return IdleDue(model, *m);
}

ModelPhase Scheduler::Phase(const std::string& model) const {
  const ModelState* m = Find(model);
  return m == nullptr ? ModelPhase::kStopped : m->phase;
}

int Scheduler::InFlight(const std::string& model) const {
  const ModelState* m = Find(model);
  return m == nullptr ? 0 : m->in_flight;
}

int Scheduler::Queued(const std::string& model) const {
  for (const Batch& b : queue_) {
    if (b.model == model) return static_cast<int>(b.requests.size());
  }
  return 0;
}

int Scheduler::QueuePosition(const std::string& model) const {
  int position = 0;
  for (const Batch& b : queue_) {
    ++position;
    if (b.model == model) return position;
  }
  return 0;
}

uint64_t Scheduler::StopsCompleted(const std::string& model) const {
  const ModelState* m = Find(model);
  return m == nullptr ? 0 : m->stops_completed;
}

bool Scheduler::AllStopped() const {
  return std::all_of(models_.begin(), models_.end(),
                     [](const auto& entry) { return entry.second.phase == ModelPhase::kStopped; });
}

}  // namespace swapd
