// ScriptedBackend: an in-process Backend for Router tests; no process, no socket. A shared
// BackendScript says how starts behave (delay, hold until released, failure) and records what
// happened (starts, stops, which models run) so tests can wait on it and check the order.
// Thread safe: every field of BackendScript and every ScriptedBackend is guarded by script.mu.
// Make the script with std::make_shared (the factory shares it with the backends).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backends/backend.h"

namespace swapd::testing {

class ScriptedBackend;

struct BackendScript : std::enable_shared_from_this<BackendScript> {
  std::mutex mu;
  std::condition_variable cv;
  // Behaviour, per model id.
  std::map<std::string, std::chrono::milliseconds> start_delay;
  std::map<std::string, bool> hold;         // Start blocks while true (or until Stop)
  std::map<std::string, std::string> fail;  // Start fails with this message when not empty
  // Where a running backend says it listens (BackendInfo::proxy); empty: not told.
  std::map<std::string, std::string> live_proxy;
  // Record.
  std::vector<std::string> events;  // "start m", "ready m", "failed m", "stop m", "crash m"
  std::map<std::string, int> starts;
  std::set<std::string> running;                     // starting or ready
  std::map<std::string, ScriptedBackend*> backends;  // owned by the Router
  int next_pid = 1000;

  void Release(const std::string& model) {
    std::lock_guard lock(mu);
    hold[model] = false;
    cv.notify_all();
  }
  int Starts(const std::string& model) {
    std::lock_guard lock(mu);
    return starts[model];
  }
  bool Running(const std::string& model) {
    std::lock_guard lock(mu);
    return running.count(model) != 0;
  }
  std::vector<std::string> Events() {
    std::lock_guard lock(mu);
    return events;
  }
  // Simulates the process dying while ready: fires the exit callback on a thread of its own.
  void Crash(const std::string& model);
  // The first half of Crash: the backend's state has turned; the returned function fires the
  // exit callback (the Router has not heard of the exit until it is called).
  std::function<void()> Die(const std::string& model);
  BackendFactory Factory();
};

class ScriptedBackend : public Backend {
 public:
  ScriptedBackend(std::string model, std::shared_ptr<BackendScript> script)
      : model_(std::move(model)), script_(std::move(script)) {
    std::lock_guard lock(script_->mu);
    script_->backends[model_] = this;
  }
  ~ScriptedBackend() override {
    std::lock_guard lock(script_->mu);
    script_->backends.erase(model_);
  }

  Status Start() override {
    BackendScript& s = *script_;
    std::unique_lock lock(s.mu);
    if (state_ == BackendState::kReady) return Status::Ok();
    if (state_ == BackendState::kStarting || state_ == BackendState::kStopping) {
      return Status::Error(ErrorCode::kInternal, "scripted backend: overlapping Start");
    }
    Enter(BackendState::kStarting);
    pid_ = ++s.next_pid;
    cancelled_ = false;
    ++s.starts[model_];
    s.running.insert(model_);
    s.events.push_back("start " + model_);
    const auto until = std::chrono::steady_clock::now() + s.start_delay[model_];
    s.cv.wait_until(lock, until, [&] { return cancelled_; });
    s.cv.wait(lock, [&] { return cancelled_ || !s.hold[model_]; });
    if (cancelled_) {
      Exit(BackendState::kStopped, "stopped while starting");
      return Status::Error(ErrorCode::kBackendFailed, last_error_);
    }
    if (!s.fail[model_].empty()) {
      s.events.push_back("failed " + model_);
      Exit(BackendState::kFailed, s.fail[model_]);
      return Status::Error(ErrorCode::kBackendFailed, last_error_);
    }
    s.events.push_back("ready " + model_);
    Enter(BackendState::kReady);
    return Status::Ok();
  }

  void Stop() override {
    BackendScript& s = *script_;
    std::unique_lock lock(s.mu);
    if (state_ == BackendState::kStarting) {
      cancelled_ = true;
      s.cv.notify_all();
      s.cv.wait(lock, [&] { return state_ != BackendState::kStarting; });
    }
    if (state_ != BackendState::kReady) return;
    s.events.push_back("stop " + model_);
    Exit(BackendState::kStopped, "");
  }

  BackendInfo Info() const override {
    std::lock_guard lock(script_->mu);
    BackendInfo info;
    info.state = state_;
    info.pid = pid_;
    info.last_error = last_error_;
    info.since = since_;
    if (state_ != BackendState::kStopped && state_ != BackendState::kFailed) {
      auto live = script_->live_proxy.find(model_);
      if (live != script_->live_proxy.end()) info.proxy = live->second;
    }
    return info;
  }
  std::string LogTail(size_t /*lines*/) const override { return "log of " + model_; }
  void SetExitCallback(std::function<void(const std::string&)> callback) override {
    std::lock_guard lock(script_->mu);
    exit_callback_ = std::move(callback);
  }

 private:
  friend struct BackendScript;
  // script.mu held.
  void Enter(BackendState state) {
    state_ = state;
    since_ = std::chrono::steady_clock::now();
    script_->cv.notify_all();
  }
  void Exit(BackendState state, std::string why) {
    last_error_ = std::move(why);
    pid_ = 0;
    script_->running.erase(model_);
    Enter(state);
  }

  const std::string model_;
  const std::shared_ptr<BackendScript> script_;
  BackendState state_ = BackendState::kStopped;
  int pid_ = 0;
  bool cancelled_ = false;
  std::string last_error_;
  std::chrono::steady_clock::time_point since_;
  std::function<void(const std::string&)> exit_callback_;
};

inline std::function<void()> BackendScript::Die(const std::string& model) {
  std::lock_guard lock(mu);
  ScriptedBackend* b = backends.at(model);
  events.push_back("crash " + model);
  b->Exit(BackendState::kStopped, "exit status 139");
  return [callback = b->exit_callback_] { callback("exit status 139"); };
}

inline void BackendScript::Crash(const std::string& model) { std::thread(Die(model)).join(); }

inline BackendFactory BackendScript::Factory() {
  return [self = shared_from_this()](const ModelConfig& model,
                                     const Config&) -> std::unique_ptr<Backend> {
    return std::make_unique<ScriptedBackend>(model.id, self);
  };
}

}  // namespace swapd::testing
