// The daemon's signals and its drain. SIGHUP reloads the configuration. SIGTERM or SIGINT starts
// a graceful shutdown: new requests get 503 at once (and the event and log streams end); the
// server stops, which would cut streams, only when no request is in flight or queued, or when
// the drain timeout (--shutdown-timeout) has passed (then the backends are stopped first, so
// that streams end with an error event rather than silently). A second stop signal exits at once
// (the guardian kills every backend's process group).
// Call BlockDaemonSignals() before any thread exists: every thread inherits the mask and only the
// SignalHandler's thread receives the signals. A SignalHandler owns that thread; made and
// destroyed by one thread (the App's).
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

#include "daemon/service.h"

namespace swapd {

// Blocks SIGTERM, SIGINT and SIGHUP for this thread and those it will start, and ignores SIGPIPE
// (a client that hangs up must not kill the daemon) and SIGXFSZ (past a file-size limit a write
// fails, and is reported).
void BlockDaemonSignals();

class SignalHandler {
 public:
  // `service` is not owned and must outlive the handler.
  SignalHandler(Service& service, std::chrono::seconds drain_timeout);
  ~SignalHandler();  // Stop()
  SignalHandler(const SignalHandler&) = delete;
  SignalHandler& operator=(const SignalHandler&) = delete;

  // The server stopped serving: the thread ends. Idempotent.
  void Stop();

 private:
  void Loop();

  Service& service_;
  const std::chrono::seconds drain_timeout_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace swapd
