// Metrics: per-model request counters and histograms, rendered in the Prometheus text exposition
// format for GET /metrics: requests by route class and status class, request duration and time to
// first byte, prompt and completion tokens, the backend-reported tokens/s, plus the Router's
// per-model state, in-flight and queued gauges. Thread safe.
#pragma once

#include <array>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "backends/router.h"
#include "daemon/upstream_proxy.h"

namespace swapd {

class Metrics {
 public:
  Metrics();

  void RecordRequest(const ProxyRecord& record);
  // A request that never reached the backend (queue timeout, start failure, 429).
  void RecordRejected(const std::string& model_id, int status);

  std::string RenderPrometheus(const std::vector<ModelSnapshot>& models) const;

 private:
  static constexpr std::array<double, 12> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                      0.5,   1,    2.5,   5,    10,  30};
  struct Histogram {
    std::array<uint64_t, kBuckets.size()> counts{};
    uint64_t count = 0;
    double sum = 0;
    void Observe(double seconds);
  };
  struct PerModel {
    std::map<std::string, uint64_t> requests_by_status;  // "2xx", "4xx", "5xx"
    Histogram duration;
    Histogram ttfb;
    uint64_t prompt_tokens = 0;
    uint64_t completion_tokens = 0;
    uint64_t cached_tokens = 0;
    double last_prompt_tps = 0;
    double last_generation_tps = 0;
    uint64_t client_disconnects = 0;
    uint64_t upstream_failures = 0;
  };

  std::chrono::steady_clock::time_point start_;
  mutable std::mutex mu_;
  std::map<std::string, PerModel> models_;  // Guarded by mu_
};

}  // namespace swapd
