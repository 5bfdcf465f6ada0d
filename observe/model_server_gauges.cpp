#include "observe/model_server_gauges.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "backends/residency_capacity.h"
#include "base/prometheus_text.h"

namespace swapd {
namespace {

std::string Joined(const std::vector<std::string>& ids) {
  std::string out;
  for (const std::string& id : ids) {
    if (!out.empty()) out += ',';
    out += id;
  }
  return out;
}

}  // namespace

ModelServerGauges DeriveModelServerGauges(const std::vector<ModelSnapshot>& models,
                                          const MemoryAmount& budget, int max_resident) {
  ModelServerGauges g;
  g.max_models = max_resident;
  Footprint resident_cost;
  int resident = 0;
  for (const ModelSnapshot& m : models) {
    g.waiting += m.queued;
    g.running += m.in_flight;
    const BackendState state = m.backend.state;
    if (state == BackendState::kReady) {
      g.running_models.push_back(m.id);
    } else if (state == BackendState::kStarting || m.queued > 0) {
      g.waiting_models.push_back(m.id);
    }
    // What the budget counts: every model with a process (starting, ready or stopping).
    if (state == BackendState::kStarting || state == BackendState::kReady ||
        state == BackendState::kStopping) {
      resident_cost += m.cost;
      ++resident;
    }
  }
  std::sort(g.running_models.begin(), g.running_models.end());
  std::sort(g.waiting_models.begin(), g.waiting_models.end());
  double usage = 0;
  if (!budget.empty()) {
    usage = BudgetShare(budget, resident_cost);
  } else if (max_resident > 0) {
    usage = static_cast<double>(resident) / max_resident;
  } else if (resident > 0) {
    usage = 1;
  }
  g.kv_cache_usage = std::clamp(usage, 0.0, 1.0);
  return g;
}

std::string RenderModelServerGauges(const ModelServerGauges& g,
                                    std::chrono::system_clock::time_point now) {
  std::ostringstream out;
  PrometheusHeader(out, "vllm:num_requests_waiting", "gauge",
                   "Requests queued for a model to load or for room, all models (swapd).");
  out << "vllm:num_requests_waiting " << g.waiting << "\n";
  PrometheusHeader(out, "vllm:num_requests_running", "gauge",
                   "Requests in flight at the backends, all models (swapd).");
  out << "vllm:num_requests_running " << g.running << "\n";
  PrometheusHeader(out, "vllm:kv_cache_usage_perc", "gauge",
                   "Use of the memory budget by the models not stopped, 0..1; without a budget "
                   "the share of max_lora models resident (swapd).");
  out << "vllm:kv_cache_usage_perc " << g.kv_cache_usage << "\n";
  PrometheusHeader(out, "vllm:lora_requests_info", "gauge",
                   "Unix time of the sample; labels: the ready models, the models loading or "
                   "waited for, how many may be resident at once (swapd).");
  const double seconds = std::chrono::duration<double>(now.time_since_epoch()).count();
  out << "vllm:lora_requests_info{max_lora=\"" << g.max_models << "\",running_lora_adapters=\""
      << PrometheusLabel(Joined(g.running_models)) << "\",waiting_lora_adapters=\""
      << PrometheusLabel(Joined(g.waiting_models)) << "\"} " << std::fixed << std::setprecision(3)
      << seconds << "\n";
  return out.str();
}

}  // namespace swapd
