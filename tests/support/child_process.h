// Subprocess: a real child process for integration tests. It starts a program with arguments and
// an environment, captures its stdout and stderr line by line (one pipe, so their lines keep the
// order written), lets a test wait for a line or for the exit with a deadline, and never leaks:
// the destructor SIGKILLs the child (its whole process group by default, so grandchildren go too)
// and reaps it. Set SWAPD_TEST_ECHO=1 to copy every captured line to stderr while debugging.
//
// Thread safe: any method may be called from any thread. A reader thread owned by the object
// collects the output. The child gets PR_SET_PDEATHSIG=SIGKILL (so a crashing test binary leaves
// nothing behind); that signal fires when the *thread* that called Start exits, so start children
// from the test's own thread, not from a short-lived helper thread.
//
//   auto started = Subprocess::Start({.argv = {FAKE_BACKEND_BINARY, "--port", "0"}});
//   REQUIRE(started.ok());
//   auto& child = *started.value();
//   auto line = child.WaitForLine("listening on http://", std::chrono::seconds(10));
//   INFO(child.Output());
//   REQUIRE(line);
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"

namespace swapd::testing {

struct SubprocessSpec {
  // argv[0] is the program: a path, or a name looked up on the PATH of the child's environment.
  std::vector<std::string> argv;
  // "K=V" entries applied in order on top of the test's environment (later wins). "K=" sets K to
  // the empty string, which is not the same as unset.
  std::vector<std::string> env;
  // Names removed from the inherited environment (before `env` is applied).
  std::vector<std::string> unset_env;
  // Working directory of the child; empty = the test's.
  std::string working_dir;
  // The child leads a new process group, and Signal/Kill/the destructor address the whole group.
  // When false it stays in the test's group and only the child itself is signalled.
  bool own_process_group = true;
};

struct ExitStatus {
  bool exited = false;  // true: exited normally with `code`; false: killed by `signal`
  int code = -1;
  int signal = 0;

  bool ExitedWith(int expected) const { return exited && code == expected; }
  std::string ToString() const;  // "exit code 3" or "killed by signal 9 (Killed)"
};

class Subprocess {
 public:
  // Starts the child. Fails (as a value) when the program cannot be found or executed.
  static Result<std::unique_ptr<Subprocess>> Start(SubprocessSpec spec);

  // SIGKILLs what is left (see own_process_group), reaps the child, stops the reader.
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  // The process group the child leads, or the test's group when own_process_group is false.
  pid_t pgid() const { return pgid_; }

  // Waits until a captured line starts with `prefix` (lines already captured count too) and
  // returns the first such line. nullopt when the deadline passes, or when the output ended (every
  // writer closed the pipe) without such a line.
  std::optional<std::string> WaitForLine(std::string_view prefix,
                                         std::chrono::milliseconds timeout);
  // Same with any condition on the line.
  std::optional<std::string> WaitForLineMatching(const std::function<bool(std::string_view)>& match,
                                                 std::chrono::milliseconds timeout);

  // The lines captured so far (without their newlines).
  std::vector<std::string> Lines() const;
  // The lines captured so far joined with '\n': handy in a failure message.
  std::string Output() const;

  // Sends `sig` to the group (own_process_group) or to the child. False if nothing was signalled.
  bool Signal(int sig);

  // Waits for the child to exit and reaps it; nullopt when the deadline passes first. Once reaped,
  // every later call returns the same status at once.
  std::optional<ExitStatus> WaitForExit(std::chrono::milliseconds timeout);
  // True until the child has exited (reaps it if it just did).
  bool Running();

  // SIGKILL (to the group when own_process_group) and reap. Returns the exit status.
  ExitStatus Kill();

 private:
  Subprocess(pid_t pid, pid_t pgid, int output_fd, bool own_group);
  void ReadOutput();
  // Reaps with waitpid(flags). Requires reap_mu_ held. True once reaped.
  bool TryReapLocked(int flags);

  const pid_t pid_;
  const pid_t pgid_;
  const bool own_group_;
  const int output_fd_;
  std::thread reader_;

  mutable std::mutex mu_;
  std::condition_variable lines_changed_;
  std::vector<std::string> lines_;  // Guarded by mu_
  bool output_ended_ = false;       // Guarded by mu_
  bool stop_reading_ = false;       // Guarded by mu_

  std::mutex reap_mu_;
  std::optional<ExitStatus> exit_status_;  // Guarded by reap_mu_
};

}  // namespace swapd::testing
