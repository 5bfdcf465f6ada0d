#include "daemon/shutdown.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstring>

#include "daemon/service_notify.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;

sigset_t DaemonSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, s);
  return signals;
}

}  // namespace

void BlockDaemonSignals() {
  const sigset_t signals = DaemonSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  signal(SIGXFSZ, SIG_IGN);
}

SignalHandler::SignalHandler(Service& service, std::chrono::seconds drain_timeout)
    : service_(service), drain_timeout_(drain_timeout), thread_([this] { Loop(); }) {}

SignalHandler::~SignalHandler() { Stop(); }

void SignalHandler::Stop() {
  done_ = true;
  if (thread_.joinable()) thread_.join();
}

void SignalHandler::Loop() {
  const sigset_t signals = DaemonSignals();
  int stops = 0;
  Clock::time_point drain_deadline = Clock::time_point::max();  // max() = not stopping
  bool stopped = false;
  while (!done_) {
    timespec timeout{0, 50 * 1000 * 1000};
    const int sig = sigtimedwait(&signals, nullptr, &timeout);
    if (stops > 0 && !stopped) {
      const bool late = Clock::now() >= drain_deadline;
      if (late) {
        spdlog::warn(
            "{} requests still in flight {} s after the stop signal: stopping the backends",
            service_.Busy(), drain_timeout_.count());
        service_.router().Shutdown();
      }
      if (late || service_.Busy() == 0) {
        stopped = true;
        service_.door().Stop();
      }
    }
    if (sig == SIGHUP) {
      if (stops == 0) service_.reloader().Reload("SIGHUP");
      continue;
    }
    if (sig != SIGTERM && sig != SIGINT) continue;
    if (++stops > 1) {
      spdlog::warn("second stop signal: exiting now");
      _exit(1);
    }
    // Refusing first, so that what the log line says holds once it is written.
    service_.RefuseNewRequests();
    spdlog::info(
        "{}: shutting down: new requests get 503; in-flight ones may finish for {} s (a second "
        "signal exits at once)",
        strsignal(sig), drain_timeout_.count());
    NotifyStopping();
    drain_deadline = Clock::now() + drain_timeout_;
  }
}

}  // namespace swapd
