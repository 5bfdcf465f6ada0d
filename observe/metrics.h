// Metrics: per-model request counters and histograms, rendered in the Prometheus text exposition
// format for GET /metrics: requests by route and status class, request duration and time to first
// byte, prompt and completion tokens, the backend-reported tokens/s; the models' lives (starts,
// start failures, crashes, stops by reason, swaps, load duration) from the Router's events; the
// Router's per-model state, in-flight and queued gauges and each backend's resident memory (at
// most a second old); the slot cache (saves, restores, bytes, times, and the prompt tokens the
// first request after a restore did not have to process); swapd's uptime, build info, resident
// memory and open descriptors. Thread safe.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "backends/router.h"
#include "backends/slot_store.h"
#include "frontdoor/upstream_proxy.h"

namespace swapd {

// What /api/models shows of a model's metrics.
struct ModelCounters {
  uint64_t starts = 0;
  uint64_t start_failures = 0;
  uint64_t crashes = 0;
  double last_generation_tps = 0;  // 0: never measured
  double last_prompt_tps = 0;
};

class Metrics {
 public:
  Metrics();

  // One proxied request's outcome (counted on its route; duration, time to first byte, tokens,
  // tokens/s).
  void RecordRequest(const ProxyRecord& record);
  // One request answered for `model_id` on `route` (e.g. "/v1/chat/completions") that did not
  // reach the backend (queue timeout, start failure, 429).
  void CountRequest(const std::string& model_id, const std::string& route, int status);

  // Feeds the model-life counters; give the result to Router::SetEvents. `this` must outlive the
  // Router's use of it.
  RouterEvents RouterHooks();

  // What a model's slot cache did (give it to SlotStore::SetObserver). A restore marks the model:
  // its next request's timings (cache_n, prompt_n) count as what the restore saved.
  void RecordSlotEvent(const SlotEvent& event);

  ModelCounters Counters(const std::string& model_id) const;

  std::string RenderPrometheus(const std::vector<ModelSnapshot>& models) const;

 private:
  struct Histogram {
    explicit Histogram(const std::vector<double>* bounds);
    const std::vector<double>* bounds;  // upper bounds, ascending; not owned (static)
    std::vector<uint64_t> counts;
    uint64_t count = 0;
    double sum = 0;
    void Observe(double seconds);
  };
  struct PerModel {
    PerModel();
    // route -> status class ("2xx", "4xx", "5xx", "error") -> count
    std::map<std::string, std::map<std::string, uint64_t>> requests;
    Histogram duration;
    Histogram ttfb;
    Histogram load;
    Histogram slot_save;
    Histogram slot_restore;
    uint64_t prompt_tokens = 0;
    uint64_t completion_tokens = 0;
    uint64_t cached_tokens = 0;
    double last_prompt_tps = 0;
    double last_generation_tps = 0;
    uint64_t client_disconnects = 0;
    uint64_t upstream_failures = 0;
    uint64_t starts = 0;
    uint64_t start_failures = 0;
    uint64_t crashes = 0;
    uint64_t swaps = 0;
    std::map<std::string, uint64_t> stops;  // by reason
    uint64_t slot_saves = 0;
    uint64_t slot_save_failures = 0;
    uint64_t slot_saved_bytes = 0;
    uint64_t slot_restores = 0;
    uint64_t slot_restore_failures = 0;
    uint64_t slot_restored_bytes = 0;
    bool restore_pending = false;           // the next request reports what the restore saved
    uint64_t restored_prompt_tokens = 0;    // cache_n of the first request after a restore
    uint64_t unrestored_prompt_tokens = 0;  // prompt_n of that request
  };
  void RenderModelCounters(std::ostream& out) const;  // requires mu_
  // The resident memory of a running backend's processes, measured at most once a second: it
  // walks /proc (every process's stat, to find the backend's group), which a scrape every 50 ms
  // must not do each time. Thread safe.
  int64_t BackendResidentBytes(const BackendInfo& backend) const;

  std::chrono::steady_clock::time_point start_;
  mutable std::mutex mu_;
  std::map<std::string, PerModel> models_;  // Guarded by mu_

  static constexpr std::chrono::seconds kResidentFor{1};
  struct Resident {
    std::chrono::steady_clock::time_point at;
    int64_t bytes = 0;
  };
  mutable std::mutex resident_mu_;
  mutable std::map<int, Resident> resident_;  // by backend pid; Guarded by resident_mu_
};

}  // namespace swapd
