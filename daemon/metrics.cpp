#include "daemon/metrics.h"

#include <unistd.h>

#include <dirent.h>

#include <fstream>
#include <sstream>

namespace swapd {
namespace {

std::string StatusClass(int status) {
  if (status <= 0) return "error";
  return std::to_string(status / 100) + "xx";
}

// Prometheus label values escape backslash, double quote and newline.
std::string Label(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

long ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  long pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * sysconf(_SC_PAGESIZE);
}

int OpenDescriptors() {
  int n = 0;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (readdir(dir)) ++n;
    closedir(dir);
    n -= 3;  // ".", ".." and the directory's own descriptor
  }
  return n;
}

}  // namespace

Metrics::Metrics() : start_(std::chrono::steady_clock::now()) {}

void Metrics::Histogram::Observe(double seconds) {
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++counts[i];
  }
  ++count;
  sum += seconds;
}

void Metrics::RecordRequest(const ProxyRecord& r) {
  std::lock_guard lock(mu_);
  PerModel& m = models_[r.model_id];
  ++m.requests_by_status[StatusClass(r.status)];
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
}

void Metrics::RecordRejected(const std::string& model_id, int status) {
  std::lock_guard lock(mu_);
  ++models_[model_id].requests_by_status[StatusClass(status)];
}

std::string Metrics::RenderPrometheus(const std::vector<ModelSnapshot>& snapshot) const {
  std::ostringstream out;
  auto header = [&](const char* name, const char* type, const char* help) {
    out << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
  };
  std::lock_guard lock(mu_);

  header("swapd_requests_total", "counter", "Requests by model and HTTP status class.");
  for (const auto& [id, m] : models_) {
    for (const auto& [cls, n] : m.requests_by_status) {
      out << "swapd_requests_total{model=\"" << Label(id) << "\",status=\"" << cls << "\"} " << n
          << "\n";
    }
  }
  auto histogram = [&](const char* name, const char* help, Histogram PerModel::*field) {
    header(name, "histogram", help);
    for (const auto& [id, m] : models_) {
      const Histogram& h = m.*field;
      for (size_t i = 0; i < kBuckets.size(); ++i) {
        out << name << "_bucket{model=\"" << Label(id) << "\",le=\"" << kBuckets[i] << "\"} "
            << h.counts[i] << "\n";
      }
      out << name << "_bucket{model=\"" << Label(id) << "\",le=\"+Inf\"} " << h.count << "\n";
      out << name << "_sum{model=\"" << Label(id) << "\"} " << h.sum << "\n";
      out << name << "_count{model=\"" << Label(id) << "\"} " << h.count << "\n";
    }
  };
  histogram("swapd_request_duration_seconds", "Time from request to the end of the response.",
            &PerModel::duration);
  histogram("swapd_time_to_first_byte_seconds", "Time from request to the backend's headers.",
            &PerModel::ttfb);
  auto counter = [&](const char* name, const char* help, uint64_t PerModel::*field) {
    header(name, "counter", help);
    for (const auto& [id, m] : models_) {
      out << name << "{model=\"" << Label(id) << "\"} " << m.*field << "\n";
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
  auto gauge = [&](const char* name, const char* help, double PerModel::*field) {
    header(name, "gauge", help);
    for (const auto& [id, m] : models_) {
      out << name << "{model=\"" << Label(id) << "\"} " << m.*field << "\n";
    }
  };
  gauge("swapd_generation_tokens_per_second", "Last generation speed reported by the backend.",
        &PerModel::last_generation_tps);
  gauge("swapd_prompt_tokens_per_second", "Last prompt speed reported by the backend.",
        &PerModel::last_prompt_tps);

  header("swapd_model_state", "gauge", "1 for the state each model is in.");
  for (const auto& m : snapshot) {
    for (BackendState s : {BackendState::kStopped, BackendState::kStarting, BackendState::kReady,
                           BackendState::kStopping, BackendState::kFailed}) {
      out << "swapd_model_state{model=\"" << Label(m.id) << "\",state=\"" << ToString(s) << "\"} "
          << (m.backend.state == s ? 1 : 0) << "\n";
    }
  }
  header("swapd_in_flight_requests", "gauge", "Requests being answered by each model.");
  for (const auto& m : snapshot) {
    out << "swapd_in_flight_requests{model=\"" << Label(m.id) << "\"} " << m.in_flight << "\n";
  }
  header("swapd_queued_requests", "gauge", "Requests waiting for each model.");
  for (const auto& m : snapshot) {
    out << "swapd_queued_requests{model=\"" << Label(m.id) << "\"} " << m.queued << "\n";
  }
  header("swapd_uptime_seconds", "gauge", "Seconds since swapd started.");
  out << "swapd_uptime_seconds "
      << std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() << "\n";
  header("swapd_resident_memory_bytes", "gauge", "Resident memory of swapd itself.");
  out << "swapd_resident_memory_bytes " << ResidentBytes() << "\n";
  header("swapd_open_fds", "gauge", "Open file descriptors of swapd itself.");
  out << "swapd_open_fds " << OpenDescriptors() << "\n";
  return out.str();
}

}  // namespace swapd
