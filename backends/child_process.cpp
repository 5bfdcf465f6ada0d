#include "backends/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "backends/guardian.h"

namespace swapd {
namespace {

int OpenPidfd(int pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace

ChildProcess::ChildProcess(int pid, int output_fd, bool watched, std::unique_ptr<Cage> cage)
    : pid_(pid), output_fd_(output_fd), watched_(watched), cage_(std::move(cage)) {
  if (output_fd_ >= 0) {
    int flags = ::fcntl(output_fd_, F_GETFL);
    ::fcntl(output_fd_, F_SETFL, flags | O_NONBLOCK);
  }
  // The child is ours and unreaped, so its pid cannot be reused before pidfd_open.
  exit_fd_ = OpenPidfd(pid_);
  if (exit_fd_ >= 0) {
    ::fcntl(exit_fd_, F_SETFD, FD_CLOEXEC);
    exit_fd_is_pidfd_ = true;
    return;
  }
  // Old kernel or a seccomp filter without pidfd_open: wait (without reaping) on a thread.
  exit_fd_ = ::eventfd(0, EFD_CLOEXEC);
  int efd = exit_fd_;
  exit_watcher_ = std::thread([pid, efd] {
    siginfo_t info;
    while (::waitid(P_PID, pid, &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
    }
    uint64_t one = 1;
    ssize_t ignored = ::write(efd, &one, sizeof(one));
    (void)ignored;
  });
}

ChildProcess::~ChildProcess() {
  if (!reaped()) {
    SignalAll(SIGKILL);
    Wait();
  }
  if (exit_watcher_.joinable()) exit_watcher_.join();
  cage_.reset();  // SIGKILLs what is left of the run and removes its cgroup
  if (watched_) Guardian::Unwatch(pgid());
  if (output_fd_ >= 0) ::close(output_fd_);
  if (exit_fd_ >= 0) ::close(exit_fd_);
}

bool ChildProcess::SignalAll(int sig) {
  // Until the leader is reaped its group id cannot be reused; after that the cage has them all.
  bool group = !reaped_ && ::kill(-pgid(), sig) == 0;
  bool others = cage_ && cage_->Signal(sig, group ? pgid() : 0) > 0;
  bool any = group || others;
  return any;
}

bool ChildProcess::AnyAlive() const {
  if (!reaped_ && (::kill(-pgid(), 0) == 0 || errno == EPERM)) return true;
  return cage_ && cage_->Alive();
}

bool ChildProcess::KillAll(std::chrono::milliseconds limit) {
  SignalAll(SIGKILL);
  return !cage_ || cage_->KillAll(limit);
}

int ChildProcess::Wait() {
  std::lock_guard<std::mutex> lock(wait_mu_);
  if (reaped_) return wait_status_;
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  // ECHILD means someone else reaped it (SIGCHLD ignored, or a waitpid(-1) elsewhere): report it
  // as an unknown exit rather than blocking.
  wait_status_ = r == pid_ ? status : 0xff00;
  reaped_ = true;
  return wait_status_;
}

std::string DescribeWaitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return "exit code " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    int sig = WTERMSIG(wait_status);
    const char* abbrev = ::sigabbrev_np(sig);
    std::string text = "killed by signal " + std::to_string(sig);
    if (abbrev != nullptr) text += std::string(" (SIG") + abbrev + ")";
    return text;
  }
  return "stopped with wait status " + std::to_string(wait_status);
}

}  // namespace swapd
