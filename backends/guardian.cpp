#include "backends/guardian.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

namespace swapd {
namespace {

constexpr int kMaxGroups = 4096;

// Closes every descriptor >= `from`. Async-signal-safe (raw syscalls only).
void CloseFrom(int from) {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, from, ~0U, 0) == 0) return;
#endif
  struct rlimit rl;
  long limit = ::getrlimit(RLIMIT_NOFILE, &rl) == 0 ? static_cast<long>(rl.rlim_cur) : 1024;
  if (limit > 65536 || limit < 0) limit = 65536;
  for (long fd = from; fd < limit; ++fd) ::close(static_cast<int>(fd));
}

// The guardian process. Runs in a child forked from a multithreaded process, so it calls only
// async-signal-safe functions: no malloc, no locks, no stdio. Never returns.
[[noreturn]] void GuardianMain(int sock) {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &sa, nullptr);
  }
  sa.sa_handler = SIG_IGN;  // EOF, not a signal meant for swapd, ends the guardian
  ::sigaction(SIGPIPE, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGHUP, &sa, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::setpgid(0, 0);
  ::prctl(PR_SET_NAME, "swapd-guardian", 0, 0, 0);

  if (sock != 3) {
    ::dup2(sock, 3);
    sock = 3;
  }
  CloseFrom(4);
  int null_fd = ::open("/dev/null", O_RDWR);
  for (int fd = 0; fd <= 2; ++fd) ::dup2(null_fd, fd);
  if (null_fd > 3) ::close(null_fd);

  int groups[kMaxGroups];
  int count = 0;
  char buf[4096];
  size_t len = 0;
  for (;;) {
    ssize_t n = ::read(sock, buf + len, sizeof(buf) - len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: swapd is gone
    len += static_cast<size_t>(n);
    size_t start = 0;
    for (size_t i = 0; i < len; ++i) {
      if (buf[i] != '\n') continue;
      char op = buf[start];
      long value = 0;
      for (size_t j = start + 1; j < i && buf[j] >= '0' && buf[j] <= '9'; ++j) {
        value = value * 10 + (buf[j] - '0');
      }
      int pgid = static_cast<int>(value);
      if (op == '+' && pgid > 1 && count < kMaxGroups) {
        groups[count++] = pgid;
      } else if (op == '-') {
        for (int k = 0; k < count; ++k) {
          if (groups[k] == pgid) {
            groups[k] = groups[--count];
            break;
          }
        }
      }
      start = i + 1;
    }
    std::memmove(buf, buf + start, len - start);
    len -= start;
    if (len == sizeof(buf)) len = 0;  // garbage without newlines: drop it
  }
  for (int k = 0; k < count; ++k) ::kill(-groups[k], SIGKILL);
  ::_exit(0);
}

struct GuardianState {
  std::mutex mu;
  int pid = 0;           // Guarded by mu.
  int sock = -1;         // swapd's end. Guarded by mu.
  std::set<int> groups;  // registered pgids, to resend after a restart. Guarded by mu.
};

GuardianState& State() {
  static auto* state = new GuardianState();  // never destroyed: used until the process ends
  return *state;
}

bool SendLocked(GuardianState& s, const std::string& line) {
  if (s.sock < 0) return false;
  size_t off = 0;
  while (off < line.size()) {
    ssize_t n = ::send(s.sock, line.data() + off, line.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// The guardian died (killed by someone): reap it and forget it, so Start() forks a new one.
void DropLocked(GuardianState& s) {
  if (s.sock >= 0) ::close(s.sock);
  s.sock = -1;
  if (s.pid > 0) ::waitpid(s.pid, nullptr, 0);
  s.pid = 0;
}

Status StartLocked(GuardianState& s) {
  if (s.pid > 0) {
    if (::waitpid(s.pid, nullptr, WNOHANG) == 0) return Status::Ok();
    s.pid = 0;  // it exited and is reaped now
    DropLocked(s);
  }
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return Status::Error(ErrorCode::kInternal,
                         std::string("guardian: socketpair: ") + std::strerror(errno));
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return Status::Error(ErrorCode::kInternal,
                         std::string("guardian: fork: ") + std::strerror(err));
  }
  if (pid == 0) GuardianMain(fds[0]);  // closes fds[1] (CloseFrom) before reading
  ::close(fds[0]);
  s.pid = pid;
  s.sock = fds[1];
  for (int pgid : s.groups) SendLocked(s, "+" + std::to_string(pgid) + "\n");
  return Status::Ok();
}

}  // namespace

Status Guardian::Start() {
  GuardianState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  return StartLocked(s);
}

void Guardian::Watch(int pgid) {
  if (pgid <= 1) return;
  GuardianState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  s.groups.insert(pgid);
  if (!SendLocked(s, "+" + std::to_string(pgid) + "\n")) {
    DropLocked(s);
    StartLocked(s);  // resends every group, this one included
  }
}

void Guardian::Unwatch(int pgid) {
  if (pgid <= 1) return;
  GuardianState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  s.groups.erase(pgid);
  if (!SendLocked(s, "-" + std::to_string(pgid) + "\n")) DropLocked(s);
}

int Guardian::Pid() {
  GuardianState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.pid;
}

}  // namespace swapd
