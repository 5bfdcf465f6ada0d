// Router: decides which backends run and hands out Leases. It drives the pure Scheduler
// (backends/scheduler.h) with events and carries out its effects (starting and stopping Backends on
// worker threads). A request holds a Lease while it is in flight; the Lease's destructor tells the
// scheduler the request finished (in-flight count, TTL clock).
// Thread safe: Acquire, Unload and Snapshot may be called from any number of threads.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/residency_policy.h"
#include "backends/scheduler.h"
#include "base/proxy_url.h"
#include "base/status.h"
#include "config/config.h"
#include "config/diff.h"

namespace swapd {

class RouterImpl;

// Proof that a request for a model was admitted; the model stays running while any Lease lives.
// Move-only. Destroying it (or Release()) ends the request.
class Lease {
 public:
  Lease() = default;
  Lease(Lease&& other) noexcept;
  Lease& operator=(Lease&& other) noexcept;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease();

  const std::string& model_id() const { return model_id_; }
  // Where to send the request; shared, so that a request holds it without a copy.
  const ProxyUrl& proxy_url() const { return *proxy_url_; }
  const std::shared_ptr<const ProxyUrl>& shared_proxy_url() const { return proxy_url_; }
  void Release();

 private:
  friend class RouterImpl;
  std::shared_ptr<RouterImpl> router_;
  uint64_t request_id_ = 0;
  std::string model_id_;
  std::shared_ptr<const ProxyUrl> proxy_url_;
};

struct ModelSnapshot {
  std::string id;
  BackendInfo backend;
  int in_flight = 0;
  int queued = 0;
  Footprint cost;  // what the memory budget counts for it (declared or learned, the larger)
  // How long a start of it is expected to take (start to ready): what SetExpectedLoad said (the
  // daemon's median of its recent loads), else its last successful start in this run; zero when
  // neither is known.
  std::chrono::milliseconds expected_load{0};
  // How long its last successful start in this run took (start to ready); zero when none.
  std::chrono::milliseconds last_load{0};
  // The ttl in force (the config's, or Ollama's keep_alive for this residency; zero: none), and
  // when the model idles out if nothing arrives (ready and idle with a ttl; else unset).
  std::chrono::seconds ttl{0};
  std::optional<std::chrono::steady_clock::time_point> idle_deadline;
};

// What the Router tells an observer (metrics) about models' lives. Every callback may be empty.
// They run on Router worker threads or backend monitor threads, never with the Router's lock
// held; they must be quick and must not call back into the Router.
struct RouterEvents {
  std::function<void(const std::string& model)> on_start;  // a start begins
  // A start ended: ready (ok) or failed; `took` is from the start to ready or failure.
  std::function<void(const std::string& model, bool ok, std::chrono::steady_clock::duration took)>
      on_start_finished;
  std::function<void(const std::string& model)> on_crash;  // the backend exited while ready
  // A stop begins. `reason`: "group" or "matrix" (to make room for another model by those
  // rules), "budget" (to make room within the memory budgets), "ttl", "unload", "reload"
  // (its definition changed or it was removed) or "shutdown".
  std::function<void(const std::string& model, const char* reason)> on_stop;
};

class Router {
 public:
  Router(std::shared_ptr<const Config> config, BackendFactory factory);
  ~Router();  // stops every backend

  // Waits until `model_id` (an id, not an alias) runs and admits the request, or fails:
  // kNotFound (unknown model), kTooManyRequests (concurrencyLimit), kBackendFailed (start failed,
  // with exit status and log tail), kTimeout (deadline), kUnavailable (shutting down or cancelled).
  // `cancelled` is polled while waiting (a client that went away).
  // `evict_protected`: the request may evict `swappable: false` models (memory.evictProtectedKeys).
  Result<Lease> Acquire(const std::string& model_id, std::chrono::steady_clock::time_point deadline,
                        std::function<bool()> cancelled = nullptr, bool evict_protected = false);

  // Stops one model (or all when `model_id` is empty) at once, after its unloadTimeout grace.
  // Blocks until they are stopped.
  void Unload(const std::string& model_id = "");

  // Starts the models of hooks.on_startup.preload, honouring groups. Does not block.
  void Preload();
  // Starts `model_id` without a request (as a preload: groups, matrix and budgets decide what
  // must make room). Does not block: Snapshot() shows it starting, then ready or failed.
  void Load(const std::string& model_id);
  // Stops `model_id` as Unload does, without waiting for it.
  void BeginUnload(const std::string& model_id);
  // The model's current residency (starting or ready) idles out `ttl` after its last request
  // instead of its configured ttl, until it stops; zero or less: it stays until something else
  // stops it. Ignored when the model does not run (Ollama's keep_alive).
  void SetResidencyTtl(const std::string& model_id, std::chrono::seconds ttl);

  std::vector<ModelSnapshot> Snapshot() const;
  // Whether the Router counts `model_id` ready (a request for it would be admitted at once unless
  // its concurrency limit or a queued swap holds it back).
  bool IsReady(const std::string& model_id) const;

  // Waits until the Router no longer counts `model_id` as ready (its exit was noticed, or it is
  // stopping), so that the next Acquire starts it again instead of admitting to a dead process.
  // False at the deadline. A backend's own state may turn before the Router's: wait on this one.
  bool AwaitNotReady(const std::string& model_id, std::chrono::steady_clock::time_point deadline);

  // What became of a model whose backend just failed a request (the connection broke or was
  // refused): waits until the Router no longer counts it ready (a crash is noticed a moment after
  // the connection breaks), then says why: "backend exited: <exit status and last log lines>" or
  // "backend stopping (unload)". Empty when the model is still ready at the deadline.
  std::string AwaitFailure(const std::string& model_id,
                           std::chrono::steady_clock::time_point deadline);

  // How long a start of `model_id` is expected to take, from outside (load times kept across
  // restarts); Snapshot() reports it as expected_load. A reload that changes the model forgets it.
  void SetExpectedLoad(const std::string& model_id, std::chrono::milliseconds expected);
  // Where the oldest queued request for `model_id` stands in the queue of waiting batches: 1 for
  // the head, 0 when none of its requests waits. Thread safe; takes the Router's lock briefly.
  int QueuePosition(const std::string& model_id) const;

  // What a model was measured to need (Scheduler::SetFootprint): the memory budget counts the
  // larger of this and its declaration, and evicts others when the running models exceed it.
  void SetFootprint(const std::string& model_id, const Footprint& learned);
  // The memory budgets in force; empty when the config sets none.
  MemoryAmount Budget() const;
  // How many models may be resident at once under the group (or matrix) rules and the budgets,
  // with the costs known now (backends/residency_capacity.h). Cheap: computed again only after a
  // reload or a new footprint.
  int MaxResident() const;
  // What a request for `model_id` (an id, not an alias) would stop or be refused for, now.
  Scheduler::Preview Preview(const std::string& model_id);

  // Sets the observer of starts, stops and crashes (replaces the previous one). Thread safe;
  // events already under way may still go to the previous observer.
  void SetEvents(RouterEvents events);

  // Stops admitting requests (new Acquire calls fail with kUnavailable) and stops all backends.
  void Shutdown();

  // The last `lines` log lines of a model's backend; empty when it never ran.
  std::string LogTail(const std::string& model_id, size_t lines) const;

  // A reload: `config` replaces the configuration. Unchanged models keep their process; changed
  // ones restart with the new definition once their in-flight requests finish; removed ones
  // drain and stop; added ones become routable. Does not block. Returns what changed.
  ConfigDiff Reconfigure(std::shared_ptr<const Config> config);

 private:
  std::shared_ptr<RouterImpl> impl_;
};

}  // namespace swapd
