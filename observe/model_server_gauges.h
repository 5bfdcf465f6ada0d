// The model-server protocol on /metrics: the node-total gauges that Kubernetes' inference gateway
// endpoint picker (llm-d's router, engine type `vllm`) reads from every pod, derived from what
// the Router knows, so that a stock picker routes each request to a node where its model is
// resident, else to one with room (docs/kubernetes.md "What the endpoint picker sees"):
//   vllm:num_requests_waiting   requests queued for a model (to load, or for room), all models
//   vllm:num_requests_running   requests in flight at the backends
//   vllm:kv_cache_usage_perc    the memory budget's use (costs of the models not stopped over the
//                               budget, the fullest dimension), 0..1; without a budget the share of
//                               the max_lora models that are resident. swapd reads no KV figures
//                               from the backends.
//   vllm:lora_requests_info     value: the Unix time of the sample; labels: running_lora_adapters
//                               (ready models), waiting_lora_adapters (starting models, and stopped
//                               ones that requests wait for), max_lora (Router::MaxResident)
// Pure: safe from any thread. Deriving touches no model's ttl or LRU: a scrape is not activity.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "backends/router.h"

namespace swapd {

struct ModelServerGauges {
  int waiting = 0;
  int running = 0;
  double kv_cache_usage = 0;                // 0..1
  std::vector<std::string> running_models;  // sorted
  std::vector<std::string> waiting_models;  // sorted
  int max_models = 0;
};

// From the Router's snapshot, its budget (empty: none) and MaxResident().
ModelServerGauges DeriveModelServerGauges(const std::vector<ModelSnapshot>& models,
                                          const MemoryAmount& budget, int max_resident);

// The four gauges with HELP and TYPE lines; `now` is lora_requests_info's value.
std::string RenderModelServerGauges(const ModelServerGauges& gauges,
                                    std::chrono::system_clock::time_point now);

}  // namespace swapd
