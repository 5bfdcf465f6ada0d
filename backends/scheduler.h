// Scheduler: the pure state machine that decides which models run. Events come in (a request
// arrived, finished or gave up; a start or stop finished; a backend exited; unload, preload,
// shutdown; time passed) and effects go out through SchedulerEffects (start or stop a model, admit
// or reject a request). It never blocks, never logs, never reads a clock: time is an argument.
// Not thread safe: the caller serializes every call (the Router holds one mutex around it).
//
// Decisions (see also DESIGN.md "Group semantics"):
// - Queue: requests that cannot be admitted at once wait in one FIFO of batches, one batch per
//   model, in order of the batch's first request (arrivals A B A B are served A A B B). A batch
//   acts when no earlier batch wants the opposite (to stop its model, or to run one it stops);
//   batches with disjoint effects proceed in parallel. Its stops are issued first (a model with
//   requests in flight is stopped only once they finish); its start begins when all stops are
//   done; its requests are admitted once its model is ready and no conflicting model runs (the
//   group rule holds on every request, as in llama-swap: asking for an exclusive model that is
//   already ready still stops a non-exclusive one started beside it).
// - Starvation bound: a request for a ready model that an earlier batch wants stopped skips the
//   queue at most kMaxBypass times in a row; later ones queue behind the swap.
// - concurrencyLimit: a request arriving while the model has `limit` requests in flight is
//   rejected at once with kTooManyRequests (as llama-swap answers 429 at once). Requests waiting
//   in the queue do not count as in flight and are never rejected for the limit later: they are
//   admitted in order as slots free up, bounded by the caller's deadline.
// - A failed start rejects every request of the model's batch (kBackendFailed with the reason);
//   the next request starts the model again. A backend that exits while ready becomes stopped;
//   its in-flight requests are detached (as for Unload) and the next request starts it again.
// - Unload stops at once, in-flight requests or not (they are detached: their RequestFinished is
//   ignored; the proxy sees the backend go away). A starting model is stopped too (the start is
//   cancelled). Queued requests are kept: they start the model again once the stop completes
//   (a client waiting for an answer should not fail because an operator freed memory). A pending
//   preload of the model is dropped.
// - Preload queues a batch without requests per model, in order: conflicting preloads run one
//   after the other, so the later one wins (as llama-swap's sequential preload does).
// - TTL: a ready model with no request in flight and none queued is stopped ttl after it became
//   ready or after its last request finished.
// - Overlapped swaps (config `memory.overlapSwaps`, on by default): a start waits for the stops
//   it needs to finish, unless every one of them is stopping already and the budgets show that
//   the model fits beside them: budgets set, each of these models' footprints known (declared or
//   measured) and budgeted on every resource it uses (RAM, each GPU), and no two on one endpoint.
//   Then the model starts, and serves once ready, while they stop (the kernel takes a fraction of
//   a second to free a large model's memory; a slot cache's save takes longer).
// - Memory budgets (config `memory:`, backends/residency_policy.h): a model that is about to start
//   must fit in the budgets beside the models that keep running after the group or matrix rules
//   have chosen their evictions; if not, more idle models are evicted (StopReason::kBudget), in
//   parallel. A model's cost is the larger of its declaration and its learned footprint
//   (SetFootprint). A learned footprint that pushes the running models over a budget evicts the
//   least recently used others (kBudget) at once. A model that alone exceeds a budget is refused.
// - Protection: a `swappable: false` model is never stopped to make room (groups, matrix or
//   budget), nor is a model with a `minResidency` while it starts and until that long after it
//   became ready. A batch that needs it gone waits (memory.onProtected: wait) until it stops on
//   its own (ttl, unload), its residency ends, or its requests give up; or is refused at once
//   with kUnavailable and a Retry-After (reject, the default). TTL, unload, reload and shutdown
//   still stop it. The time is learned from the events that carry it (Tick, SetNow,
//   StartFinished, RequestFinished): the caller calls SetNow before RequestArrived.
// - Reconfigure (a reload) keeps every model whose definition did not change running. A changed
//   model is stale: it admits nothing new, stops once its in-flight requests finish (at once when
//   it is only starting), and its queued requests then start the new definition. A removed model
//   is retired: its queued and new requests are rejected (kNotFound) and it stops once idle.
// - Shutdown rejects every queued request with kUnavailable, stops every model, admits nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backends/matrix_solver.h"
#include "backends/residency_policy.h"
#include "base/status.h"
#include "config/config.h"

namespace swapd {

using RequestId = uint64_t;
using SchedulerTime = std::chrono::steady_clock::time_point;

// Why the Scheduler stops a model.
enum class StopReason {
  kGroup,     // to make room for another model by the group rules (swap, exclusive)
  kMatrix,    // to make room for another model by the matrix
  kBudget,    // to make room for another model within the memory budgets
  kTtl,       // idle for its ttl
  kUnload,    // asked for (an unload route)
  kReload,    // its definition changed or it was removed
  kShutdown,  // swapd is stopping
};
// "group", "matrix", "budget", "ttl", "unload", "reload", "shutdown".
const char* ToString(StopReason reason);

// Where the Scheduler's decisions go. Called synchronously from inside a Scheduler event; an
// implementation must not call back into the Scheduler from these methods.
class SchedulerEffects {
 public:
  virtual ~SchedulerEffects() = default;
  // Start the model's backend; answer later with Scheduler::StartFinished.
  virtual void StartModel(const std::string& model) = 0;
  // Stop the model's backend (also when it is starting); answer later with StopFinished.
  virtual void StopModel(const std::string& model, StopReason reason) = 0;
  // The request is in flight now; it ends with Scheduler::RequestFinished.
  virtual void Admit(RequestId request) = 0;
  // The request failed; the Scheduler has forgotten it.
  virtual void Reject(RequestId request, const Status& why) = 0;
  // Why a model is about to be loaded the way it is (the matrix router's choice), for the log.
  virtual void Explain(const std::string& model, const std::string& why) {
    (void)model;
    (void)why;
  }
};

// A model's life as the Scheduler sees it.
enum class ModelPhase { kStopped, kStarting, kReady, kStopping };
const char* ToString(ModelPhase phase);

class Scheduler {
 public:
  // Fast-path admissions allowed to a model that a queued swap waits to stop.
  static constexpr int kMaxBypass = 8;

  // Does not own `effects`, which must outlive the Scheduler.
  Scheduler(const Config& config, SchedulerEffects* effects);

  // ---- Events. Each may emit effects before it returns.
  // A request for `model` (an id). Admitted, rejected, or queued. `id` must be new.
  // `evict_protected`: it may stop `swappable: false` models to make room (and so may the rest of
  // its model's batch).
  void RequestArrived(RequestId id, const std::string& model, bool evict_protected = false);
  // A queued request gives up (deadline, client gone). False if it was not queued (then it was
  // already admitted or rejected).
  bool RequestWithdrawn(RequestId id);
  // An admitted request ended. Unknown or detached ids are ignored.
  void RequestFinished(RequestId id, SchedulerTime now);
  void StartFinished(const std::string& model, const Status& result, SchedulerTime now);
  void StopFinished(const std::string& model);
  // The backend exited on its own (crash). Ignored unless the model is ready.
  void BackendExited(const std::string& model);
  // Stops `model`, or every model when empty. Unknown ids are ignored.
  void Unload(const std::string& model);
  // The model's current residency (starting or ready) idles out after `ttl` instead of its
  // configured ttl, until it stops; zero or less: it does not idle out (Ollama's keep_alive).
  // Ignored for a stopped, stopping or unknown model.
  void SetResidencyTtl(const std::string& model, std::chrono::seconds ttl);
  // Starts `models` in order, honouring groups. Unknown ids are ignored.
  void Preload(const std::vector<std::string>& models);
  // What a model was measured to need (while it runs, or from the history of its definition).
  // Its cost is the larger of this and its declaration; a cost that pushes the running models
  // over a budget evicts others. Unknown models are ignored; a reload that changes a model's
  // definition forgets it.
  void SetFootprint(const std::string& model, const Footprint& learned);
  // Time passed: applies TTLs due at `now`; a minimum residency that ended lets waiting loads
  // go on.
  void Tick(SchedulerTime now);
  // The time, before an event that carries none (RequestArrived, Preload): residencies that
  // ended let waiting loads go on; TTLs wait for Tick.
  void SetNow(SchedulerTime now);
  // A reload: `config` replaces the configuration; `restart` names the models whose definition
  // changed (config/diff.h). New limits, TTLs and group rules apply from now on.
  void Reconfigure(const Config& config, const std::set<std::string>& restart);
  void Shutdown();

  // ---- Queries. Unknown models read as stopped and empty.
  // When Tick should next be called; nullopt when no TTL or residency end is pending.
  std::optional<SchedulerTime> NextDeadline() const;
  // What a request for `model` would do now, changing nothing (the dashboard's "what would this
  // evict"): the models it would stop first, which of them the memory budget chose and why, the
  // matrix's choice, or why it would be refused.
  struct Preview {
    ModelPhase phase = ModelPhase::kStopped;
    std::vector<std::string> evict;  // in the order they would stop
    std::set<std::string> by_budget;
    std::string budget_why;
    std::string matrix;   // the matrix's decision, with a matrix config
    std::string refusal;  // empty unless a request would be refused
  };
  Preview PreviewFor(const std::string& model) const;
  ModelPhase Phase(const std::string& model) const;
  int InFlight(const std::string& model) const;
  // The ttl in force: this residency's (SetResidencyTtl), else the configured one; zero: none.
  std::chrono::seconds TtlInForce(const std::string& model) const;
  // When the model idles out if no request arrives: ready, idle, with a ttl; nullopt otherwise.
  std::optional<SchedulerTime> IdleDeadline(const std::string& model) const;
  // Where `model`'s waiting batch stands in the queue: 1 for the head, 0 when it has none.
  int QueuePosition(const std::string& model) const;
  int Queued(const std::string& model) const;
  // How many times the model reached kStopped from kStopping (Unload waits for this to move).
  uint64_t StopsCompleted(const std::string& model) const;
  // The larger of the model's declared and learned footprint.
  Footprint Cost(const std::string& model) const;
  // The budgets in force (empty: none).
  const MemoryAmount& budget() const { return budget_; }
  // Every model stopped, no start or stop outstanding.
  bool AllStopped() const;
  bool shutting_down() const { return shutting_down_; }

 private:
  struct ModelState {
    int concurrency_limit = 0;
    std::chrono::seconds ttl{0};
    // SetResidencyTtl's, for this residency only (reset when the model stops).
    std::optional<std::chrono::seconds> residency_ttl;
    // The ttl in force: this residency's, else the configured one.
    std::chrono::seconds Ttl() const { return residency_ttl.value_or(ttl); }
    int64_t priority = 0;
    // Groups: must be stopped for this model to run. Matrix: never runs beside this model (the
    // solver decides the rest when the model loads).
    std::set<std::string> conflicts;
    ModelPhase phase = ModelPhase::kStopped;
    bool start_pending = false;  // a StartModel effect has not been answered yet
    bool stop_pending = false;   // a StopModel effect has not been answered yet
    int in_flight = 0;           // admitted requests not finished (nor detached)
    // Bumped when the model stops: the requests admitted before are detached (their end counts
    // for nothing).
    uint64_t epoch = 0;
    int bypassed = 0;  // fast-path admissions in a row while a swap wanted it stopped
    SchedulerTime idle_since;
    uint64_t stops_completed = 0;
    bool stale = false;    // changed by a reload: must stop before it serves again
    bool retired = false;  // removed by a reload: serves nothing, stops once idle
    Footprint declared;    // `memory:` of the model
    std::optional<Footprint> learned;
    bool swappable = true;
    std::chrono::seconds min_residency{0};
    // Until when a minimum residency protects it (set when it becomes ready).
    SchedulerTime resident_until;
    bool over_budget_told = false;  // a rebalance that could not help was explained once
    std::string endpoint;           // where it answers (its proxy URL, as configured)
  };
  struct Batch {
    std::string model;
    std::list<RequestId> requests;  // FIFO
    bool preload = false;           // kept until the model runs, even without requests
    bool explained = false;         // the matrix or budget choice for this load was logged
    bool evict_protected = false;   // a request of it may stop protected models
  };
  // What running a model needs first.
  struct Plan {
    std::vector<std::string> evict;   // not stopped yet: stop these first
    std::set<std::string> by_budget;  // those of `evict` the budget chose
    std::string budget_why;           // the budget's choice, when it chose any
    // Refused: the model alone exceeds a budget, or (protected non-empty) only stopping protected
    // models would let it run.
    Status refusal;
    std::vector<std::string> protected_models;
  };

  // Walks the queue once, in order, letting every batch that is not blocked make progress.
  void Pump();
  // Stops stale and retired models that have no request in flight.
  void StopDrained();
  // Takes limits, TTLs and conflicts from `config`; models missing from it become retired.
  void Configure(const Config& config);
  // Issues the stops and the start batch `b` needs; admits its requests when its model can
  // serve. Returns true when the model is ready and nothing conflicting runs.
  bool Advance(Batch& b);
  // Whether `model` may start while `evict`, all stopping already, still stop (an overlapped
  // swap): the budgets cover every resource they use and hold them all at once.
  bool StartsBesideStops(const std::string& model, const std::vector<std::string>& evict) const;
  bool BlockedByQueue(const std::string& model, std::list<Batch>::const_iterator end) const;
  // The models that must stop before `model` may run, among those not stopped yet.
  std::vector<std::string> Evictions(const std::string& model,
                                     MatrixDecision* decision = nullptr) const;
  // Evictions, then the memory budget (for a model not running yet) and protection.
  // `evict_protected`: protected models may be evicted like the others.
  Plan PlanFor(const std::string& model, MatrixDecision* decision = nullptr,
               bool evict_protected = false) const;
  // The models not stopped, except `model` and `skip`, as the budget weighs them.
  std::vector<ResidentModel> Residents(const std::string& model,
                                       const std::vector<std::string>& skip,
                                       bool evict_protected = false) const;
  // Why `m` must not be stopped to make room ("swappable: false", "minResidency: 300 s, 120 s
  // left"); empty when it may be.
  std::string ProtectedBy(const ModelState& m) const;
  // Seconds a client refused for `protected_models` should wait before asking again.
  int RetryAfterSeconds(const std::vector<std::string>& protected_models) const;
  // A learned footprint pushed the running models over a budget: evict idle ones.
  void Rebalance();
  // Queues a new batch behind every batch of the same or a higher priority.
  std::list<Batch>::iterator Enqueue(Batch batch);
  void IssueStart(const std::string& model);
  void IssueStop(const std::string& model, StopReason reason);
  void Admit(ModelState& m, const std::string& model, RequestId id);
  // The model has no process left: detach its requests, count the stop.
  void BecomeStopped(ModelState& m);
  std::list<Batch>::iterator FindBatch(const std::string& model);
  void RejectBatch(Batch& b, const Status& why);
  ModelState* Find(const std::string& model);
  const ModelState* Find(const std::string& model) const;
  // When a ready, idle model with a ttl idles out; nullopt when it does not (busy, queued for).
  std::optional<SchedulerTime> IdleDue(const std::string& model, const ModelState& m) const;

  SchedulerEffects* const effects_;
  std::optional<MatrixSolver> matrix_;  // set when the matrix router is configured
  std::map<std::string, ModelState> models_;
  std::list<Batch> queue_;
  std::map<RequestId, std::string> queued_;  // queued request -> model
  struct Admission {
    std::string model;
    uint64_t epoch = 0;  // the model's when admitted
  };
  std::map<RequestId, Admission> admitted_;  // in-flight request -> its model
  MemoryAmount budget_;                      // config.memory.budget (auto already resolved)
  bool wait_for_protected_ = false;
  bool overlap_swaps_ = true;  // config.memory.overlap_swaps
  bool shutting_down_ = false;
  SchedulerTime now_;  // the latest time an event brought
};

}  // namespace swapd
