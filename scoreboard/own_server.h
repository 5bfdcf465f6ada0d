// OwnServer: a server that `swapd bench` starts for itself: the swapd of `--config FILE` (this
// same binary, /proc/self/exe, as `swapd --config FILE --listen 127.0.0.1:PORT` on a free loopback
// port), or llama.cpp's llama-server in router mode for `--compare-router`. Its output goes to a
// log file. It gets the parent-death signal SIGTERM, so it (and through it its backends) goes
// away when the bench dies, however the bench dies; Stop() (or the destructor) sends SIGTERM and
// waits for it. Start must be called from the thread that lives as long as the bench (the main
// thread): the parent-death signal fires when the forking thread exits. Not synchronized: one
// owner.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace swapd {

class OwnServer {
 public:
  // Runs `args` (args[0]: the program), a server that will listen on 127.0.0.1:`port`, and waits
  // up to `timeout` for GET /health to answer 200. On failure the error says why, naming the
  // server `name`, and holds the log's last lines.
  static Result<std::unique_ptr<OwnServer>> Start(std::vector<std::string> args, int port,
                                                  const std::string& log_path,
                                                  std::chrono::seconds timeout,
                                                  const std::string& name);
  // This binary as `swapd --config FILE --listen 127.0.0.1:PORT` on a free loopback port.
  static Result<std::unique_ptr<OwnServer>> StartSwapd(const std::string& config_path,
                                                       const std::string& log_path,
                                                       std::chrono::seconds timeout);
  ~OwnServer();  // Stop()
  OwnServer(const OwnServer&) = delete;
  OwnServer& operator=(const OwnServer&) = delete;

  const std::string& url() const { return url_; }  // "http://127.0.0.1:PORT"
  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }

  // SIGTERM, then waits (SIGKILL after a minute) and reaps. Later calls do nothing.
  void Stop();

 private:
  OwnServer(pid_t pid, std::string url, std::string log_path)
      : pid_(pid), url_(std::move(url)), log_path_(std::move(log_path)) {}

  pid_t pid_;
  bool reaped_ = false;
  const std::string url_;
  const std::string log_path_;
};

// The last `n` lines of the file at `path` ("" when it cannot be read).
std::string LastLines(const std::string& path, size_t n);

}  // namespace swapd
