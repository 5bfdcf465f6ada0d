// Internal to ProcessBackend (process_backend.cpp starts, process_backend_stop.cpp stops): what
// one run of a backend's process is, and where its output goes. Not for other files.
#pragma once

#include <spdlog/spdlog.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "backends/child_process.h"
#include "backends/load_progress.h"
#include "backends/log_ring.h"
#include "backends/output_monitor.h"
#include "backends/port_allocator.h"
#include "backends/process_backend.h"

namespace swapd {
namespace process_backend {

using Clock = std::chrono::steady_clock;
// How many lines of a backend's output an error message carries.
inline constexpr size_t kTailLines = 20;

inline long Millis(Clock::duration d) {
  return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

}  // namespace process_backend

// Where a backend's output lines go: the ring, swapd's log, the daemon's listener.
struct ProcessBackend::OutputSink {
  std::string model_id;
  LogRing ring;
  bool to_log = false;
  std::function<void(const std::string&, std::string_view)> on_line;
  LoadWatch load;  // the load's progress, while a start goes on

  OutputSink(std::string id, size_t bytes) : model_id(std::move(id)), ring(bytes) {}
  void Line(std::string_view line) {
    load.Line(line);
    ring.Append(line);
    if (to_log) spdlog::info("[{}] {}", model_id, line);
    if (on_line) on_line(model_id, line);
  }
};

// One spawned process and its monitor thread.
struct ProcessBackend::Running {
  std::shared_ptr<ChildProcess> child;  // shared with the monitor thread
  std::unique_ptr<OutputMonitor> monitor;
  bool expected_exit = false;   // a stop is under way. Guarded by the backend's mu_.
  bool exited = false;          // reaped. Guarded by the backend's mu_.
  int wait_status = 0;          // Guarded by the backend's mu_.
  PortLease port;               // its ${PORT}, while it may listen there
  bool may_retry_port = false;  // the first run of a start on a chosen port
  size_t first_line = 0;        // the log ring's line count when it was spawned
};

}  // namespace swapd
