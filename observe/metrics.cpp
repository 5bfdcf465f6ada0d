#include "observe/metrics.h"

#include <ostream>
#include <sstream>

#include "base/prometheus_text.h"
#include "memory/process_memory.h"

namespace swapd {
namespace {

const std::vector<double> kRequestBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                             0.5,   1,    2.5,   5,    10,  30};
// Loading a model takes from a fraction of a second to minutes.
const std::vector<double> kLoadBuckets = {0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600};
// Saving or restoring one slot: milliseconds for a small cache, tens of seconds for a huge one.
const std::vector<double> kSlotBuckets = {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};

std::string StatusClass(int status) {
  if (status <= 0) return "error";
  return std::to_string(status / 100) + "xx";
}

}  // namespace

Metrics::Histogram::Histogram(const std::vector<double>* b) : bounds(b), counts(b->size(), 0) {}

void Metrics::Histogram::Observe(double seconds) {
  for (size_t i = 0; i < bounds->size(); ++i) {
    if (seconds <= (*bounds)[i]) ++counts[i];
  }
  ++count;
  sum += seconds;
}

Metrics::PerModel::PerModel()
    : duration(&kRequestBuckets),
      ttfb(&kRequestBuckets),
      load(&kLoadBuckets),
      slot_save(&kSlotBuckets),
      slot_restore(&kSlotBuckets) {}

Metrics::Metrics() : start_(std::chrono::steady_clock::now()) {}

void Metrics::RecordRequest(const ProxyRecord& r) {
  std::lock_guard lock(mu_);
  PerModel& m = models_[r.model_id];
  ++m.requests[r.route][StatusClass(r.status)];
  m.duration.Observe(std::chrono::duration<double>(r.duration).count());
  if (r.status > 0) m.ttfb.Observe(std::chrono::duration<double>(r.time_to_first_byte).count());
  if (r.usage.prompt_tokens) m.prompt_tokens += static_cast<uint64_t>(*r.usage.prompt_tokens);
  if (r.usage.completion_tokens) {
    m.completion_tokens += static_cast<uint64_t>(*r.usage.completion_tokens);
  }
  if (r.usage.cached_tokens) m.cached_tokens += static_cast<uint64_t>(*r.usage.cached_tokens);
  if (r.usage.prompt_per_second) m.last_prompt_tps = *r.usage.prompt_per_second;
  if (r.usage.predicted_per_second) m.last_generation_tps = *r.usage.predicted_per_second;
  if (r.client_gone) ++m.client_disconnects;
  if (r.upstream_failed) ++m.upstream_failures;
  if (m.restore_pending && (r.usage.cached_tokens || r.usage.prompt_processed)) {
    m.restore_pending = false;
    m.restored_prompt_tokens += static_cast<uint64_t>(r.usage.cached_tokens.value_or(0));
    m.unrestored_prompt_tokens += static_cast<uint64_t>(r.usage.prompt_processed.value_or(0));
  }
}

void Metrics::RecordSlotEvent(const SlotEvent& e) {
  std::lock_guard lock(mu_);
  PerModel& m = models_[e.model_id];
  switch (e.kind) {
    case SlotEvent::Kind::kSaved:
      ++m.slot_saves;
      m.slot_saved_bytes += e.bytes;
      m.slot_save.Observe(e.seconds);
      break;
    case SlotEvent::Kind::kSaveFailed:
      ++m.slot_save_failures;
      break;
    case SlotEvent::Kind::kRestored:
      ++m.slot_restores;
      m.slot_restored_bytes += e.bytes;
      m.slot_restore.Observe(e.seconds);
      m.restore_pending = true;
      break;
    case SlotEvent::Kind::kRestoreFailed:
      ++m.slot_restore_failures;
      break;
  }
}

void Metrics::CountRequest(const std::string& model_id, const std::string& route, int status) {
  std::lock_guard lock(mu_);
  ++models_[model_id].requests[route][StatusClass(status)];
}

RouterEvents Metrics::RouterHooks() {
  RouterEvents events;
  events.on_start = [this](const std::string& model) {
    std::lock_guard lock(mu_);
    ++models_[model].starts;
  };
  events.on_start_finished = [this](const std::string& model, bool ok,
                                    std::chrono::steady_clock::duration took) {
    std::lock_guard lock(mu_);
    PerModel& m = models_[model];
    if (ok) {
      m.load.Observe(std::chrono::duration<double>(took).count());
    } else {
      ++m.start_failures;
    }
  };
  events.on_crash = [this](const std::string& model) {
    std::lock_guard lock(mu_);
    ++models_[model].crashes;
  };
  events.on_stop = [this](const std::string& model, const char* reason) {
    std::lock_guard lock(mu_);
    PerModel& m = models_[model];
    ++m.stops[reason];
    const std::string why = reason;
    if (why == "group" || why == "matrix" || why == "budget") ++m.swaps;
  };
  return events;
}

ModelCounters Metrics::Counters(const std::string& model_id) const {
  std::lock_guard lock(mu_);
  ModelCounters c;
  auto it = models_.find(model_id);
  if (it == models_.end()) return c;
  c.starts = it->second.starts;
  c.start_failures = it->second.start_failures;
  c.crashes = it->second.crashes;
  c.last_generation_tps = it->second.last_generation_tps;
  c.last_prompt_tps = it->second.last_prompt_tps;
  return c;
}

void Metrics::RenderModelCounters(std::ostream& out) const {
  PrometheusHeader(out, "swapd_requests_total", "counter",
                   "Requests by model, route and HTTP status class.");
  for (const auto& [id, m] : models_) {
    for (const auto& [route, by_status] : m.requests) {
      for (const auto& [cls, n] : by_status) {
        out << "swapd_requests_total{model=\"" << PrometheusLabel(id) << "\",route=\""
            << PrometheusLabel(route) << "\",status=\"" << cls << "\"} " << n << "\n";
      }
    }
  }
  auto histogram = [&](const char* name, const char* help, Histogram PerModel::*field) {
    PrometheusHeader(out, name, "histogram", help);
    for (const auto& [id, m] : models_) {
      const Histogram& h = m.*field;
      for (size_t i = 0; i < h.bounds->size(); ++i) {
        out << name << "_bucket{model=\"" << PrometheusLabel(id) << "\",le=\"" << (*h.bounds)[i]
            << "\"} " << h.counts[i] << "\n";
      }
      out << name << "_bucket{model=\"" << PrometheusLabel(id) << "\",le=\"+Inf\"} " << h.count
          << "\n";
      out << name << "_sum{model=\"" << PrometheusLabel(id) << "\"} " << h.sum << "\n";
      out << name << "_count{model=\"" << PrometheusLabel(id) << "\"} " << h.count << "\n";
    }
  };
  histogram("swapd_request_duration_seconds", "Time from request to the end of the response.",
            &PerModel::duration);
  histogram("swapd_time_to_first_byte_seconds", "Time from request to the backend's headers.",
            &PerModel::ttfb);
  histogram("swapd_model_load_duration_seconds", "Time from a model's start to ready.",
            &PerModel::load);
  auto counter = [&](const char* name, const char* help, uint64_t PerModel::*field) {
    PrometheusHeader(out, name, "counter", help);
    for (const auto& [id, m] : models_) {
      out << name << "{model=\"" << PrometheusLabel(id) << "\"} " << m.*field << "\n";
    }
  };
  counter("swapd_prompt_tokens_total", "Prompt tokens reported by backends.",
          &PerModel::prompt_tokens);
  counter("swapd_completion_tokens_total", "Completion tokens reported by backends.",
          &PerModel::completion_tokens);
  counter("swapd_cached_prompt_tokens_total", "Prompt tokens served from the backend's cache.",
          &PerModel::cached_tokens);
  counter("swapd_client_disconnects_total", "Responses cut short because the client left.",
          &PerModel::client_disconnects);
  counter("swapd_upstream_failures_total", "Responses that failed on the backend's side.",
          &PerModel::upstream_failures);
  counter("swapd_model_starts_total", "Starts of each model's backend.", &PerModel::starts);
  counter("swapd_model_start_failures_total", "Starts that failed (exit or timeout).",
          &PerModel::start_failures);
  counter("swapd_model_crashes_total", "Backends that exited on their own while ready.",
          &PerModel::crashes);
  counter("swapd_model_swaps_total",
          "Stops of a model to make room for another (group, matrix or budget).", &PerModel::swaps);
  PrometheusHeader(
      out, "swapd_model_stops_total", "counter",
      "Stops of each model by reason (group, matrix, budget, ttl, unload, reload, shutdown).");
  for (const auto& [id, m] : models_) {
    for (const auto& [reason, n] : m.stops) {
      out << "swapd_model_stops_total{model=\"" << PrometheusLabel(id) << "\",reason=\"" << reason
          << "\"} " << n << "\n";
    }
  }
  counter("swapd_slot_saves_total", "llama-server slots saved before a planned stop.",
          &PerModel::slot_saves);
  counter("swapd_slot_save_failures_total", "Slot saves that failed or ran out of time.",
          &PerModel::slot_save_failures);
  counter("swapd_slot_saved_bytes_total", "Bytes of slot cache files saved.",
          &PerModel::slot_saved_bytes);
  counter("swapd_slot_restores_total", "Slots restored after a start.", &PerModel::slot_restores);
  counter("swapd_slot_restore_failures_total", "Slot restores that failed (a cache miss).",
          &PerModel::slot_restore_failures);
  counter("swapd_slot_restored_bytes_total", "Bytes of slot cache files restored.",
          &PerModel::slot_restored_bytes);
  counter("swapd_slot_restored_prompt_tokens_total",
          "Prompt tokens the first request after a restore took from the restored cache.",
          &PerModel::restored_prompt_tokens);
  counter("swapd_slot_unrestored_prompt_tokens_total",
          "Prompt tokens the first request after a restore still had to process.",
          &PerModel::unrestored_prompt_tokens);
  histogram("swapd_slot_save_seconds", "Time to save one slot.", &PerModel::slot_save);
  histogram("swapd_slot_restore_seconds", "Time to restore one slot.", &PerModel::slot_restore);
  auto gauge = [&](const char* name, const char* help, double PerModel::*field) {
    PrometheusHeader(out, name, "gauge", help);
    for (const auto& [id, m] : models_) {
      out << name << "{model=\"" << PrometheusLabel(id) << "\"} " << m.*field << "\n";
    }
  };
  gauge("swapd_generation_tokens_per_second", "Last generation speed reported by the backend.",
        &PerModel::last_generation_tps);
  gauge("swapd_prompt_tokens_per_second", "Last prompt speed reported by the backend.",
        &PerModel::last_prompt_tps);
}

int64_t Metrics::BackendResidentBytes(const BackendInfo& backend) const {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(resident_mu_);
  std::erase_if(resident_, [&](const auto& entry) { return now - entry.second.at > kResidentFor; });
  auto it = resident_.find(backend.pid);
  if (it == resident_.end()) {
    it = resident_.emplace(backend.pid, Resident{now, ResidentBytesOf(BackendPids(backend))}).first;
  }
  return it->second.bytes;
}

std::string Metrics::RenderPrometheus(const std::vector<ModelSnapshot>& snapshot) const {
  std::ostringstream out;
  {
    std::lock_guard lock(mu_);
    RenderModelCounters(out);
  }
  PrometheusHeader(out, "swapd_model_state", "gauge", "1 for the state each model is in.");
  for (const auto& m : snapshot) {
    for (BackendState s : {BackendState::kStopped, BackendState::kStarting, BackendState::kReady,
                           BackendState::kStopping, BackendState::kFailed}) {
      out << "swapd_model_state{model=\"" << PrometheusLabel(m.id) << "\",state=\"" << ToString(s)
          << "\"} " << (m.backend.state == s ? 1 : 0) << "\n";
    }
  }
  PrometheusHeader(out, "swapd_in_flight_requests", "gauge",
                   "Requests being answered by each model.");
  for (const auto& m : snapshot) {
    out << "swapd_in_flight_requests{model=\"" << PrometheusLabel(m.id) << "\"} " << m.in_flight
        << "\n";
  }
  PrometheusHeader(out, "swapd_queued_requests", "gauge", "Requests waiting for each model.");
  for (const auto& m : snapshot) {
    out << "swapd_queued_requests{model=\"" << PrometheusLabel(m.id) << "\"} " << m.queued << "\n";
  }
  PrometheusHeader(out, "swapd_backend_resident_memory_bytes", "gauge",
                   "Resident memory of every process of each running backend.");
  for (const auto& m : snapshot) {
    if (m.backend.pid <= 0) continue;
    out << "swapd_backend_resident_memory_bytes{model=\"" << PrometheusLabel(m.id) << "\"} "
        << BackendResidentBytes(m.backend) << "\n";
  }
  PrometheusHeader(out, "swapd_uptime_seconds", "gauge", "Seconds since swapd started.");
  out << "swapd_uptime_seconds "
      << std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() << "\n";
  PrometheusHeader(out, "swapd_build_info", "gauge",
                   "Always 1; the labels say which swapd this is.");
  out << "swapd_build_info{version=\"" << PrometheusLabel(SWAPD_VERSION) << "\"} 1\n";
  PrometheusHeader(out, "swapd_resident_memory_bytes", "gauge", "Resident memory of swapd itself.");
  out << "swapd_resident_memory_bytes " << SelfResidentBytes() << "\n";
  PrometheusHeader(out, "swapd_open_fds", "gauge", "Open file descriptors of swapd itself.");
  out << "swapd_open_fds " << SelfOpenDescriptors() << "\n";
  return out.str();
}

}  // namespace swapd
