// ChildProcess: one spawned child (made by a Launcher, backends/launcher.h) and the run it starts:
// every process it makes, directly or not (its Cage, backends/containment.h). The child leads its
// own process group, has stdin on /dev/null and stdout+stderr on one pipe whose read end swapd
// holds. Destroying a ChildProcess never leaves anything behind: if the child was not reaped yet,
// its group is SIGKILLed and it is reaped; whatever is left of the run is SIGKILLed; then the group
// is unregistered from the Guardian. Thread safe: SignalAll/AnyAlive/Wait may be called
// concurrently (e.g. a stopper signals while a monitor thread reaps). The descriptors are owned by
// the object; read them from one thread.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "backends/containment.h"

namespace swapd {

class ChildProcess {
 public:
  // Takes ownership of `output_fd` (made non-blocking here). `watched`: the group was registered
  // with the Guardian and must be unregistered when this object dies. `cage`: the run's
  // containment (null: the process group only).
  ChildProcess(int pid, int output_fd, bool watched, std::unique_ptr<Cage> cage = nullptr);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  int pid() const { return pid_; }
  int pgid() const { return pid_; }  // the child leads its own group
  // Non-blocking read end of the child's stdout and stderr (one pipe, so their lines interleave in
  // the order written). Reads EOF once every process holding the write end is gone.
  int output_fd() const { return output_fd_; }
  // Readable once the child has exited (it is not reaped by that): a pidfd, or an eventfd fed by a
  // small watcher thread on kernels without pidfd_open.
  int exit_fd() const { return exit_fd_; }

  // Sends `sig` to every process of the run: the process group while the child is unreaped (the
  // leader keeps the group id from being reused), and every member of its cage. False when no
  // process got it.
  bool SignalAll(int sig);
  // True while any process of the run is alive (the child counts until reaped).
  bool AnyAlive() const;
  // SIGKILLs every process of the run until none is left or `limit` passes; true when none is
  // (the child itself is not reaped by this).
  bool KillAll(std::chrono::milliseconds limit);
  // Where the run's processes are; null without a cage.
  std::shared_ptr<const RunScope> scope() const { return cage_ ? cage_->scope() : nullptr; }

  // Reaps the child, blocking until it exits; returns its wait status. Later calls return the same.
  int Wait();
  bool reaped() const { return reaped_.load(); }

 private:
  const int pid_;
  int output_fd_ = -1;
  int exit_fd_ = -1;
  bool exit_fd_is_pidfd_ = false;
  std::thread exit_watcher_;  // only without pidfd
  const bool watched_;
  std::unique_ptr<Cage> cage_;  // set at construction
  std::mutex wait_mu_;          // serializes Wait()
  std::atomic<bool> reaped_{false};
  int wait_status_ = 0;  // Guarded by wait_mu_; valid once reaped_.
};

// "exit code 3", "killed by signal 9 (SIGKILL)", for messages.
std::string DescribeWaitStatus(int wait_status);

}  // namespace swapd
