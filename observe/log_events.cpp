#include "observe/log_events.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

namespace swapd {
namespace {

std::string SkippedLine(uint64_t skipped) {
  return "... " + std::to_string(skipped) +
         " log lines not sent live (too many at once; GET /logs has the recent ones)";
}

}  // namespace

LogEvents::LogEvents(LogHub& logs, EventHub& hub, LogEventLimits limits)
    : logs_(logs), hub_(hub), limits_(limits), pacer_(limits.every, [this] { Flush(); }) {
  proxy_.allowance = upstream_.allowance = static_cast<double>(limits_.burst_bytes);
  refilled_ = Clock::now();
  logs_.SetListener([this](const LogLine& line) { Add(line); });
}

LogEvents::~LogEvents() {
  logs_.SetListener(nullptr);  // under the hub's lock: no Add runs after this
  pacer_.Stop();
}

void LogEvents::Add(const LogLine& line) {
  if (!hub_.Watched("logData")) return;  // nobody to tell; a new reader gets the history
  const bool own = line.source == LogHub::kSwapdSource;
  std::lock_guard lock(mu_);
  const auto now = Clock::now();
  const double refill = std::chrono::duration<double>(now - refilled_).count() *
                        static_cast<double>(limits_.bytes_per_second);
  refilled_ = now;
  const double burst = static_cast<double>(limits_.burst_bytes);
  for (Pending* source : {&proxy_, &upstream_}) {
    source->allowance = std::min(burst, source->allowance + refill);
  }
  Pending& pending = own ? proxy_ : upstream_;
  const size_t bytes = line.text.size() + (own ? 1 : line.source.size() + 4);
  if (static_cast<double>(bytes) > pending.allowance) {
    ++pending.skipped;
    ++skipped_;
  } else {
    pending.allowance -= static_cast<double>(bytes);
    if (!own) pending.text += '[' + line.source + "] ";
    pending.text += line.text;
    pending.text += '\n';
  }
  pacer_.Poke();
}

void LogEvents::Flush() {
  std::lock_guard publishing(publish_mu_);
  Publish();
}

void LogEvents::Publish() {
  Pending proxy;
  Pending upstream;
  {
    std::lock_guard lock(mu_);
    std::swap(proxy.text, proxy_.text);
    std::swap(proxy.skipped, proxy_.skipped);
    std::swap(upstream.text, upstream_.text);
    std::swap(upstream.skipped, upstream_.skipped);
  }
  if (proxy.skipped > 0) proxy.text += SkippedLine(proxy.skipped) + '\n';
  if (upstream.skipped > 0) {
    upstream.text +=
        "[" + std::string(LogHub::kSwapdSource) + "] " + SkippedLine(upstream.skipped) + '\n';
  }
  if (!proxy.text.empty()) hub_.Publish("logData", {{"source", "proxy"}, {"data", proxy.text}});
  if (!upstream.text.empty()) {
    hub_.Publish("logData", {{"source", "upstream"}, {"data", upstream.text}});
  }
}

uint64_t LogEvents::skipped() const {
  std::lock_guard lock(mu_);
  return skipped_;
}

std::string LogEventMetricsText(const LogEvents& log_events) {
  return "# HELP swapd_events_log_lines_skipped_total Log lines not sent live to /api/events "
         "readers because their source wrote faster than the live log's allowance.\n"
         "# TYPE swapd_events_log_lines_skipped_total counter\n"
         "swapd_events_log_lines_skipped_total " +
         std::to_string(log_events.skipped()) + "\n";
}

}  // namespace swapd
