// OwnSwapd: the swapd that `swapd bench --config FILE` starts for itself: this same binary
// (/proc/self/exe) as `swapd --config FILE --listen 127.0.0.1:PORT` on a free loopback port, its
// output in a log file. It gets the parent-death signal SIGTERM, so it (and through it its
// backends) goes away when the bench dies, however the bench dies; Stop() (or the destructor)
// sends SIGTERM and waits for it. Start must be called from the thread that lives as long as the
// bench (the main thread): the parent-death signal fires when the forking thread exits.
// Not synchronized: one owner.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>

#include "base/status.h"

namespace swapd {

class OwnSwapd {
 public:
  // Starts swapd and waits up to `timeout` for GET /health to answer 200. On failure the
  // error says why and holds the log's last lines.
  static Result<std::unique_ptr<OwnSwapd>> Start(const std::string& config_path,
                                                 const std::string& log_path,
                                                 std::chrono::seconds timeout);
  ~OwnSwapd();  // Stop()
  OwnSwapd(const OwnSwapd&) = delete;
  OwnSwapd& operator=(const OwnSwapd&) = delete;

  const std::string& url() const { return url_; }  // "http://127.0.0.1:PORT"
  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }

  // SIGTERM, then waits (SIGKILL after a minute) and reaps. Later calls do nothing.
  void Stop();

 private:
  OwnSwapd(pid_t pid, std::string url, std::string log_path)
      : pid_(pid), url_(std::move(url)), log_path_(std::move(log_path)) {}

  pid_t pid_;
  bool reaped_ = false;
  const std::string url_;
  const std::string log_path_;
};

// The last `n` lines of the file at `path` ("" when it cannot be read).
std::string LastLines(const std::string& path, size_t n);

}  // namespace swapd
