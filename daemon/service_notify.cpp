#include "daemon/service_notify.h"

#include <spdlog/spdlog.h>
#include <time.h>

#include <atomic>
#include <cstdlib>

#include "daemon/sd_notify.h"

namespace swapd {
namespace {

// What STATUS= says is "<phase>; <models>". The phase comes from the Notify* calls, the models
// part from the heartbeat; both live here so that either side can send the whole line.
struct StatusLine {
  std::mutex mu;
  std::string phase = "starting";  // Guarded by mu
  std::string models;              // Guarded by mu

  std::string TextLocked() const { return models.empty() ? phase : phase + "; " + models; }
};

StatusLine& TheStatusLine() {
  static StatusLine line;
  return line;
}

// Sends `state`; the first failure is logged (a unit whose READY=1 never arrives is killed by
// systemd, and the log should say why), later ones are not, so the heartbeat cannot flood it.
void Send(const std::string& state) {
  static std::atomic<bool> failure_logged{false};
  Result<bool> sent = SdNotify(state);
  if (!sent.ok() && !failure_logged.exchange(true)) {
    spdlog::warn("{} (further notify failures are not logged)", sent.status().ToString());
  }
}

bool UnderSystemd() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  return socket != nullptr && *socket != '\0';
}

// Sends `message` + the status line with the new phase. Under the lock so that messages reach
// systemd in the order their phases were set.
void NotifyPhase(const std::string& phase, const std::string& message) {
  StatusLine& status = TheStatusLine();
  std::lock_guard lock(status.mu);
  status.phase = phase;
  if (!UnderSystemd()) return;
  Send(message + "\nSTATUS=" + status.TextLocked());
}

std::string MonotonicUsec() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return std::to_string(static_cast<unsigned long long>(now.tv_sec) * 1000000ULL +
                        static_cast<unsigned long long>(now.tv_nsec) / 1000ULL);
}

void AppendList(const char* label, const std::vector<std::string>& ids, std::string* out) {
  if (ids.empty()) return;
  if (!out->empty()) *out += "; ";
  *out += label;
  *out += ": ";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) *out += ", ";
    *out += ids[i];
  }
}

}  // namespace

void NotifyReady() { NotifyPhase("serving", "READY=1"); }
void NotifyReloading() {
  NotifyPhase("reloading", "RELOADING=1\nMONOTONIC_USEC=" + MonotonicUsec());
}
void NotifyReloaded() { NotifyPhase("serving", "READY=1"); }
void NotifyStopping() { NotifyPhase("stopping", "STOPPING=1"); }

std::string ModelsStatusText(const std::vector<ModelSnapshot>& models) {
  std::vector<std::string> running, starting, failed;
  for (const auto& m : models) {
    switch (m.backend.state) {
      case BackendState::kReady:
        running.push_back(m.id);
        break;
      case BackendState::kStarting:
        starting.push_back(m.id);
        break;
      case BackendState::kFailed:
        failed.push_back(m.id);
        break;
      case BackendState::kStopped:
      case BackendState::kStopping:
        break;
    }
  }
  std::string text;
  AppendList("running", running, &text);
  AppendList("starting", starting, &text);
  AppendList("failed", failed, &text);
  return text.empty() ? "no model running" : text;
}

ServiceHeartbeat::ServiceHeartbeat(StatusSource models_status, std::chrono::milliseconds poll)
    : models_status_(std::move(models_status)), poll_(poll) {
  if (!UnderSystemd()) return;
  // WATCHDOG_USEC/WATCHDOG_PID stay in the environment; backends inherit them, and a backend
  // that asks sd_watchdog_enabled() is told no because WATCHDOG_PID (set by systemd) is not its
  // pid.
  watchdog_interval_ = SdWatchdogTimeout() / 2;
  thread_ = std::thread([this] { Loop(); });
}

ServiceHeartbeat::~ServiceHeartbeat() { Stop(); }

void ServiceHeartbeat::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ServiceHeartbeat::Loop() {
  using Clock = std::chrono::steady_clock;
  const bool watchdog = watchdog_interval_.count() > 0;
  Clock::time_point next_watchdog = Clock::now();
  Clock::time_point next_status = Clock::now();
  std::unique_lock lock(mu_);
  while (!stop_) {
    Clock::time_point now = Clock::now();
    if (watchdog && now >= next_watchdog) {
      Send("WATCHDOG=1");
      next_watchdog = now + watchdog_interval_;
    }
    if (now >= next_status) {
      lock.unlock();  // the source may take the Router's lock: never hold ours meanwhile
      std::string models = models_status_ ? models_status_() : std::string();
      {
        StatusLine& status = TheStatusLine();
        std::lock_guard status_lock(status.mu);
        if (models != status.models) {
          status.models = models;
          Send("STATUS=" + status.TextLocked());
        }
      }
      lock.lock();
      next_status = Clock::now() + poll_;
    }
    Clock::time_point wake_at = watchdog ? std::min(next_watchdog, next_status) : next_status;
    wake_.wait_until(lock, wake_at, [&] { return stop_; });
  }
}

}  // namespace swapd
