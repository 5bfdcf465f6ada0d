// ProcessBackend's stop side: Stop(), the stop of a run (cmdStop or SIGTERM to every process of
// it, the grace, SIGKILL), and what happens when a process exits (backends/process_backend.h).
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>

#include <algorithm>

#include "backends/process_backend.h"
#include "backends/process_backend_run.h"
#include "backends/stop_command.h"

namespace swapd {
namespace {

using process_backend::Clock;
using process_backend::Millis;
// How long a SIGKILLed run may take to be gone before it is reported.
constexpr auto kTreeKillLimit = std::chrono::milliseconds(5000);
// How often a stop looks whether the rest of a run is gone.
constexpr auto kTreePollEvery = std::chrono::milliseconds(20);

}  // namespace

void ProcessBackend::Stop() {
  std::unique_lock<std::mutex> lock(mu_);
  const bool was_ready = state_ == BackendState::kReady;
  switch (state_) {
    case BackendState::kStopped:
      return;
    case BackendState::kStopping:
      cv_.wait(lock, [&] { return state_ != BackendState::kStopping; });
      return;
    case BackendState::kFailed: {
      std::shared_ptr<Running> old = std::move(proc_);  // already dead and reaped
      Transition(BackendState::kStopped);
      lock.unlock();
      if (old) old->monitor->Finish();
      return;
    }
    case BackendState::kStarting:
      FinishStart(Status::Error(ErrorCode::kUnavailable,
                                "model \"" + model_.id + "\": start cancelled by a stop"));
      [[fallthrough]];
    case BackendState::kReady:
      Transition(BackendState::kStopping);
      if (slots_ && was_ready && proc_ && !proc_->exited) {
        // A planned stop of a ready process: its prompt cache is worth keeping. The state stays
        // kStopping meanwhile, so no start and no other stop comes in between.
        lock.unlock();
        slots_->Save();
        lock.lock();
      }
      RunStop(lock, /*graceful=*/true);
      return;
  }
}

void ProcessBackend::RunStop(std::unique_lock<std::mutex>& lock, bool graceful) {
  std::shared_ptr<Running> run = proc_;
  if (run) {
    const int pid = run->child->pid();
    const auto begin = Clock::now();
    const auto deadline = begin + model_.unload_timeout;
    run->expected_exit = true;
    if (graceful && !run->exited) {
      if (!model_.stop_argv.empty()) {
        SpawnRequest request{SubstitutePid(model_.stop_argv, pid), model_.env, model_.id};
        lock.unlock();
        std::shared_ptr<OutputSink> sink = sink_;
        Status s = RunStopCommand(*launcher_, request, deadline, [&](std::string_view line) {
          sink->Line("cmdStop: " + std::string(line));
        });
        if (!s.ok()) spdlog::warn("model {}: cmdStop: {}", model_.id, s.message());
        lock.lock();
      } else {
        run->child->SignalAll(SIGTERM);
      }
      cv_.wait_until(lock, deadline, [&] { return run->exited; });
      // The rest of its tree (e.g. a server a wrapper started in a new session) has the same grace.
      if (run->exited) WaitRunGone(lock, *run, deadline);
    }
    if (!run->exited || StillRunning(lock, *run)) {
      if (graceful) {
        spdlog::warn(
            "model {}: pid {} or processes it started still running {}s after the stop "
            "request: SIGKILL",
            model_.id, pid, model_.unload_timeout.count());
      }
      run->child->SignalAll(SIGKILL);
      cv_.wait(lock, [&] { return run->exited; });  // SIGKILL cannot be ignored
      lock.unlock();
      if (!run->child->KillAll(kTreeKillLimit)) {
        spdlog::error("model {}: processes of its run survive SIGKILL", model_.id);
      }
      lock.lock();
    }
    spdlog::info("model {}: pid {} stopped ({}) in {} ms", model_.id, pid,
                 DescribeWaitStatus(run->wait_status), Millis(Clock::now() - begin));
    proc_.reset();
    lock.unlock();
    run->monitor->Finish();  // stop reading: a grandchild may hold the pipe
    run.reset();
    lock.lock();
  }
  Transition(pending_failure_ ? BackendState::kFailed : BackendState::kStopped);
  pending_failure_ = false;
}

bool ProcessBackend::StillRunning(std::unique_lock<std::mutex>& lock, const Running& run) {
  lock.unlock();  // a /proc walk with markers: not under mu_
  const bool alive = run.child->AnyAlive();
  lock.lock();
  return alive;
}

void ProcessBackend::WaitRunGone(std::unique_lock<std::mutex>& lock, const Running& run,
                                 Clock::time_point deadline) {
  while (StillRunning(lock, run) && Clock::now() < deadline) {
    cv_.wait_until(lock, std::min(deadline, Clock::now() + kTreePollEvery));
  }
}

void ProcessBackend::OnExit(const std::shared_ptr<Running>& run) {
  bool stopping;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping = run->expected_exit;
  }
  // An exit on its own takes the rest of the run along (a crashed backend's workers, a server its
  // wrapper started in a new session); during a stop the rest has the stop's grace (RunStop).
  if (!stopping) run->child->SignalAll(SIGKILL);
  const int status = run->child->Wait();
  if (!stopping && !run->child->KillAll(kTreeKillLimit)) {
    spdlog::error("model {}: processes of its run survive SIGKILL", model_.id);
  }
  std::unique_lock<std::mutex> lock(mu_);
  run->exited = true;
  run->wait_status = status;
  cv_.notify_all();
  if (run->expected_exit || proc_ != run) return;  // a stop is under way: it reports
  const std::string how = DescribeWaitStatus(status);
  if (state_ == BackendState::kStarting && PortTaken(*run)) {
    port_taken_ = true;  // Start() runs it once more on another port
    cv_.notify_all();
    return;
  }
  if (state_ == BackendState::kStarting || state_ == BackendState::kReady) {
    last_exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  if (state_ == BackendState::kStarting) {
    last_error_ = "model \"" + model_.id + "\" exited during start-up: " + how + TailForMessage();
    FinishStart(Status::Error(ErrorCode::kBackendFailed, last_error_));
  } else if (state_ == BackendState::kReady) {
    last_error_ = "model \"" + model_.id + "\" exited unexpectedly: " + how + TailForMessage();
  } else {
    return;
  }
  spdlog::error("{}", last_error_);
  Transition(BackendState::kFailed);
  auto callback = exit_callback_;
  std::string reason = last_error_;
  lock.unlock();
  if (callback) callback(reason);
}

}  // namespace swapd
