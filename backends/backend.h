// Backend: ONE model's backend process (llama-server, vLLM, ...) and its life: spawn, readiness,
// stop, crash detection, log capture. The Router (backends/router.h) owns one per model.
// Thread safe: every method may be called from any thread; Start() callers that overlap join the
// same start, and Stop() while starting cancels the start.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "backends/containment.h"
#include "backends/load_progress.h"
#include "base/status.h"
#include "config/config.h"

namespace swapd {

enum class BackendState { kStopped, kStarting, kReady, kStopping, kFailed };
const char* ToString(BackendState state);

struct BackendInfo;
// Where `model`'s requests go now: its running backend's proxy, else the configured one.
std::string ProxyInUse(const ModelConfig& model, const BackendInfo& backend);
// The port of that: the run's ${PORT}, else the configured ${PORT}, else the port the proxy
// names (0 when it names none).
int PortInUse(const ModelConfig& model, const BackendInfo& backend);

struct BackendInfo {
  BackendState state = BackendState::kStopped;
  int pid = 0;             // 0 when no process runs
  std::string last_error;  // why the last start failed or the process exited; may be empty
  // How the process last exited on its own (during start-up or while ready): its exit code, or
  // 128 + the signal that killed it. Unset when it never did, or was stopped.
  std::optional<int> exit_code;
  std::chrono::steady_clock::time_point since;  // when `state` was entered
  // While starting: what the process's output says about its load (backends/load_progress.h);
  // the default (kProcess, no share) for a backend that prints nothing parseable.
  LoadProgress load;
  // Where every process of the running process is (backends/containment.h); null when none runs.
  std::shared_ptr<const RunScope> scope;
  // While a process runs (starting, ready, stopping): the port it was given for ${PORT} (the
  // configured one, or the next free one when that was taken; 0 when cmd does not use ${PORT}),
  // and the proxy its requests go to. 0 and empty otherwise.
  int port = 0;
  std::string proxy;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Starts the process if it is stopped or failed, and blocks until it is ready, fails, or
  // healthCheckTimeout passes (then the process group is killed). If a start is already under
  // way, joins it. Ok when ready. An error's message carries the exit status and the last log
  // lines.
  virtual Status Start() = 0;

  // Stops the process: cmdStop (with ${PID}) if configured, else SIGTERM to every process of its
  // run (its process group and whatever left it, backends/containment.h); SIGKILL to all of them
  // after the model's unloadTimeout; reaps. Blocks until every process of the run is gone.
  // Idempotent; safe while starting (the start then fails).
  virtual void Stop() = 0;

  virtual BackendInfo Info() const = 0;

  // The last `lines` lines the process wrote to stdout/stderr (bounded ring buffer).
  virtual std::string LogTail(size_t lines) const = 0;

  // Called once, on a backend thread, when the process exits while starting or ready without a
  // Stop() having been asked for. `reason` says how (exit code or signal) and has the log tail.
  virtual void SetExitCallback(std::function<void(const std::string& reason)> callback) = 0;
};

// Makes the Backend for a model. The real one spawns processes (backends/process_backend.h);
// tests of the Router pass a fake.
using BackendFactory =
    std::function<std::unique_ptr<Backend>(const ModelConfig& model, const Config& config)>;

}  // namespace swapd
