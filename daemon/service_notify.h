// systemd service notifications for a `Type=notify` unit, over the sd_notify protocol
// (daemon/sd_notify.h): READY=1 once listening, RELOADING=1/READY=1 around a reload, STOPPING=1
// on shutdown, STATUS= naming the models that run, and WATCHDOG=1 every WatchdogSec/2
// (ServiceHeartbeat). Every call is harmless when swapd does not run under systemd (NOTIFY_SOCKET
// unset): nothing is sent and no thread starts.
// Thread safe: the Notify* functions may be called from any thread; a ServiceHeartbeat is made and
// destroyed by one thread (the App) and runs its own thread in between.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backends/router.h"

namespace swapd {

// READY=1 and STATUS="serving; ...". Call once the HTTP server listens.
void NotifyReady();
// RELOADING=1 with MONOTONIC_USEC= (systemd >= 253 wants it) and STATUS="reloading; ...".
// Call before applying a new configuration; NotifyReloaded() after, whether it applied or not.
void NotifyReloading();
// READY=1 and STATUS="serving; ...": the reload is over.
void NotifyReloaded();
// STOPPING=1 and STATUS="stopping; ...". Call when shutdown begins.
void NotifyStopping();

// The models part of STATUS= for a Router snapshot, e.g. "running: a, b; starting: c" or
// "no model running". Lists ready, starting and failed models by id, in snapshot order.
std::string ModelsStatusText(const std::vector<ModelSnapshot>& models);

// A thread that sends WATCHDOG=1 every WatchdogSec/2 when the unit sets WatchdogSec (as
// SdWatchdogTimeout() reports it: WATCHDOG_USEC set and WATCHDOG_PID unset or swapd's pid), and
// every `poll` asks `models_status` (e.g. ModelsStatusText(router.Snapshot())) and sends STATUS=
// when the text changed. Both happen on one thread, so if `models_status` hangs (a deadlocked
// Router) the pings stop and systemd restarts swapd. No thread runs when NOTIFY_SOCKET is unset.
class ServiceHeartbeat {
 public:
  using StatusSource = std::function<std::string()>;

  // `models_status` is called on the heartbeat's thread; it must stay callable until Stop().
  explicit ServiceHeartbeat(StatusSource models_status,
                            std::chrono::milliseconds poll = std::chrono::seconds(1));
  ~ServiceHeartbeat();  // Stop()
  ServiceHeartbeat(const ServiceHeartbeat&) = delete;
  ServiceHeartbeat& operator=(const ServiceHeartbeat&) = delete;

  // Stops and joins the thread. Idempotent.
  void Stop();

  // The watchdog interval in use (WatchdogSec/2), or zero when the watchdog is off.
  std::chrono::microseconds watchdog_interval() const { return watchdog_interval_; }

 private:
  void Loop();

  const StatusSource models_status_;
  const std::chrono::milliseconds poll_;
  std::chrono::microseconds watchdog_interval_{0};

  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;  // Guarded by mu_
  std::thread thread_;
};

}  // namespace swapd
