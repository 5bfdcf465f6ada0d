#include "backends/process_backend.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <thread>

#include "backends/output_monitor.h"
#include "backends/port_check.h"
#include "backends/process_backend_run.h"
#include "backends/run_port.h"
#include "backends/stop_command.h"

namespace swapd {
namespace {

using process_backend::Clock;
using process_backend::kTailLines;
using process_backend::Millis;

// After an exit noticed through new output, the next check waits at least this long.
constexpr auto kMinCheckGap = std::chrono::milliseconds(2);

bool IsLegal(BackendState from, BackendState to) {
  using S = BackendState;
  switch (from) {
    case S::kStopped:
      return to == S::kStarting;
    case S::kStarting:
      return to == S::kReady || to == S::kFailed || to == S::kStopping;
    case S::kReady:
      return to == S::kStopping || to == S::kFailed;
    case S::kStopping:
      return to == S::kStopped || to == S::kFailed;
    case S::kFailed:
      return to == S::kStarting || to == S::kStopped;
  }
  return false;
}

}  // namespace

ProcessBackend::ProcessBackend(ModelConfig model, const Config& config,
                               ProcessBackendOptions options)
    : model_(std::move(model)),
      health_check_timeout_(model_.health_check_timeout.value_or(config.health_check_timeout)),
      launcher_(options.launcher != nullptr ? options.launcher : &DefaultLauncher()),
      probe_factory_(options.probe_factory ? options.probe_factory : DefaultProbeFactory()),
      sink_(std::make_shared<OutputSink>(model_.id, options.log_ring_bytes)),
      slots_(model_.slot_dir.empty()
                 ? nullptr
                 : std::make_unique<SlotCache>(
                       model_, options.slot_store ? options.slot_store
                                                  : std::make_shared<SlotStore>(
                                                        SlotStore::Settings::From(config)))),
      prefetch_(model_.prefetch ? std::move(options.prefetch) : nullptr),
      ports_(options.ports != nullptr ? options.ports : &ProcessPortAllocator()),
      fixed_ports_(FixedLoopbackPorts(config)),
      configured_port_(model_.port),
      since_(Clock::now()) {
  sink_->to_log = config.log_to_stdout == "upstream" || config.log_to_stdout == "both";
  sink_->on_line = std::move(options.on_output_line);
}

ProcessBackend::~ProcessBackend() { Stop(); }

void ProcessBackend::Transition(BackendState to) {
  if (!IsLegal(state_, to)) {
    spdlog::error("model {}: BUG: illegal backend transition {} -> {}", model_.id, ToString(state_),
                  ToString(to));
    assert(false && "illegal backend state transition");
  }
  spdlog::debug("model {}: {} -> {}", model_.id, ToString(state_), ToString(to));
  state_ = to;
  since_ = Clock::now();
  // Ready: output no longer announces anything, so the monitor may read it in batches.
  if (to == BackendState::kReady && proc_) proc_->monitor->CoalesceReads();
  // A start's progress begins afresh (a prefetch comes before the spawn: no stale "ready").
  if (to == BackendState::kStarting) {
    sink_->load.Begin();
  } else {
    sink_->load.End();
  }
  cv_.notify_all();
}

void ProcessBackend::FinishStart(Status status) {
  start_status_ = std::move(status);
  finished_gen_ = start_gen_;
  cv_.notify_all();
}

Status ProcessBackend::JoinStart(std::unique_lock<std::mutex>& lock, uint64_t gen) {
  cv_.wait(lock, [&] { return finished_gen_ >= gen; });
  return start_status_;
}

std::string ProcessBackend::TailForMessage() const {
  std::string tail = sink_->ring.Tail(kTailLines);
  if (tail.empty()) return "; it wrote no output";
  return "; last log lines:\n" + tail;
}

Status ProcessBackend::Start() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (state_ == BackendState::kReady) return Status::Ok();
    if (state_ == BackendState::kStarting) return JoinStart(lock, start_gen_);
    if (state_ != BackendState::kStopping) break;
    cv_.wait(lock, [&] { return state_ != BackendState::kStopping; });
  }
  const uint64_t gen = ++start_gen_;
  last_exit_code_.reset();
  port_taken_ = false;
  std::shared_ptr<Running> old = std::move(proc_);  // a process that failed: dead, maybe lingering
  Transition(BackendState::kStarting);
  if (old) {
    lock.unlock();
    old->monitor->Finish();
    old.reset();
    lock.lock();
    if (start_gen_ != gen || state_ != BackendState::kStarting) return JoinStart(lock, gen);
  }

  if (slots_) {
    lock.unlock();
    slots_->Prepare();
    lock.lock();
    if (start_gen_ != gen || state_ != BackendState::kStarting) return JoinStart(lock, gen);
  }
  if (prefetch_ && !model_.argv.empty()) {
    lock.unlock();
    prefetch_(model_, [this, gen] {
      std::lock_guard<std::mutex> guard(mu_);
      return start_gen_ != gen || state_ != BackendState::kStarting;
    });
    lock.lock();
    if (start_gen_ != gen || state_ != BackendState::kStarting) return JoinStart(lock, gen);
  }
  // The run's port is chosen (and its fields expanded) just before the spawn: the later the look,
  // the smaller the chance that another process takes the port in between.
  for (bool again = false;; again = true) {
    if (Status spawned = SpawnRun(again); !spawned.ok()) return spawned;
    if (model_.check_endpoint.empty()) {  // checkEndpoint: none
      if (!RestoreSlots(lock, gen)) return JoinStart(lock, gen);
      Transition(BackendState::kReady);
      FinishStart(Status::Ok());
      return Status::Ok();
    }
    Status ready = WaitReady(lock, gen);
    if (!port_taken_) return ready;
    // The process could not bind its port (OnExit left the start going): once more, elsewhere.
    port_taken_ = false;
    std::shared_ptr<Running> old = std::move(proc_);
    old->port.MarkBusy();
    lock.unlock();
    old->monitor->Finish();
    old.reset();
    lock.lock();
    if (start_gen_ != gen || state_ != BackendState::kStarting) return JoinStart(lock, gen);
  }
}

Status ProcessBackend::SpawnRun(bool again) {
  auto placed = PlaceRun(model_, RunPortRequest{configured_port_, fixed_ports_, again}, *ports_);
  if (!placed.ok()) {
    last_error_ = placed.status().message();
    spdlog::error("{}", last_error_);
    FinishStart(placed.status());
    Transition(BackendState::kFailed);
    return placed.status();
  }
  PortLease port = std::move(placed).value();
  if (port.held() && slots_) slots_->SetProxy(model_.proxy);
  sink_->load.Begin();  // again: what a lingering earlier process wrote meanwhile does not count
  const size_t first_line = sink_->ring.TotalLines();
  auto spawned = launcher_->Spawn(SpawnRequest{model_.argv, model_.env, model_.id});
  if (!spawned.ok()) {
    last_error_ = "model \"" + model_.id + "\": " + spawned.status().message();
    Status status = Status::Error(ErrorCode::kBackendFailed, last_error_);
    spdlog::error("{}", last_error_);
    FinishStart(status);
    Transition(BackendState::kFailed);
    return status;
  }
  auto run = std::make_shared<Running>();
  run->child = std::move(spawned).value();
  run->may_retry_port = port.held() && !again && !model_.check_endpoint.empty();
  run->port = std::move(port);
  run->first_line = first_line;
  spdlog::info("model {}: started pid {}{}", model_.id, run->child->pid(),
               run->port.held() ? " on port " + std::to_string(run->port.port()) : "");
  proc_ = run;
  std::weak_ptr<Running> weak = run;
  std::shared_ptr<OutputSink> sink = sink_;
  run->monitor = std::make_unique<OutputMonitor>(
      run->child, [sink](std::string_view line) { sink->Line(line); },
      [this] {
        output_seq_.fetch_add(1);
        cv_.notify_all();
      },
      [this, weak] {
        if (auto r = weak.lock()) OnExit(r);
      },
      [sink](std::string_view partial) { sink->load.Partial(partial); });
  return Status::Ok();
}

Status ProcessBackend::Interrupted(std::unique_lock<std::mutex>& lock, uint64_t gen) {
  if (port_taken_) return Status::Error(ErrorCode::kBackendFailed, "its port was taken");
  return JoinStart(lock, gen);
}

bool ProcessBackend::PortTaken(const Running& run) const {
  if (!run.may_retry_port) return false;
  const size_t lines = std::min(kTailLines, sink_->ring.TotalLines() - run.first_line);
  return lines > 0 && SaysAddressInUse(sink_->ring.Tail(lines));
}

Status ProcessBackend::WaitReady(std::unique_lock<std::mutex>& lock, uint64_t gen) {
  std::unique_ptr<ReadinessProbe> probe = probe_factory_(model_);
  PollBackoff backoff;
  const auto started = Clock::now();
  const auto deadline = started + health_check_timeout_;
  auto cancelled = [&] {
    return start_gen_ != gen || state_ != BackendState::kStarting || port_taken_;
  };
  std::string last_seen = "no check yet";
  for (;;) {
    if (cancelled()) return Interrupted(lock, gen);
    if (Clock::now() >= deadline) break;
    lock.unlock();
    ProbeResult result = probe->Check();
    const auto checked = Clock::now();
    lock.lock();
    if (cancelled()) return Interrupted(lock, gen);
    if (result.ready) {
      spdlog::debug("model {}: ready after {} ms", model_.id, Millis(checked - started));
      if (!RestoreSlots(lock, gen) || port_taken_) return Interrupted(lock, gen);
      Transition(BackendState::kReady);
      FinishStart(Status::Ok());
      return Status::Ok();
    }
    last_seen = result.detail;
    // Wait for the next check; new output (e.g. "server is listening") brings it forward.
    const uint64_t seen = output_seq_.load();
    cv_.wait_until(lock, std::min(checked + backoff.Next(), deadline),
                   [&] { return cancelled() || output_seq_.load() != seen; });
    cv_.wait_until(lock, std::min(checked + kMinCheckGap, deadline), cancelled);
  }
  last_error_ = "model \"" + model_.id + "\" was not ready within " +
                std::to_string(health_check_timeout_.count()) + "s (healthCheckTimeout; last " +
                probe->Target() + ": " + last_seen + ")" + TailForMessage();
  spdlog::error("{}", last_error_);
  Status status = Status::Error(ErrorCode::kUnavailable, last_error_);
  FinishStart(status);
  pending_failure_ = true;
  Transition(BackendState::kStopping);
  RunStop(lock, /*graceful=*/false);
  return status;
}

bool ProcessBackend::RestoreSlots(std::unique_lock<std::mutex>& lock, uint64_t gen) {
  if (!slots_) return true;
  lock.unlock();
  slots_->Restore();
  lock.lock();
  return start_gen_ == gen && state_ == BackendState::kStarting;
}

BackendInfo ProcessBackend::Info() const {
  std::lock_guard<std::mutex> lock(mu_);
  BackendInfo info;
  info.state = state_;
  info.pid = proc_ && !proc_->exited ? proc_->child->pid() : 0;
  if (info.pid > 0) info.scope = proc_->child->scope();
  info.last_error = last_error_;
  info.exit_code = last_exit_code_;
  info.since = since_;
  if (state_ == BackendState::kStarting) info.load = sink_->load.Progress();
  if (state_ == BackendState::kStarting || state_ == BackendState::kReady ||
      state_ == BackendState::kStopping) {
    info.port = model_.port;
    info.proxy = model_.proxy;
  }
  return info;
}

std::string ProcessBackend::LogTail(size_t lines) const { return sink_->ring.Tail(lines); }

void ProcessBackend::SetExitCallback(std::function<void(const std::string& reason)> callback) {
  std::lock_guard<std::mutex> lock(mu_);
  exit_callback_ = std::move(callback);
}

BackendFactory MakeProcessBackendFactory(ProcessBackendOptions options) {
  return [options](const ModelConfig& model, const Config& config) -> std::unique_ptr<Backend> {
    return std::make_unique<ProcessBackend>(model, config, options);
  };
}

}  // namespace swapd
