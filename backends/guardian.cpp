#include "backends/guardian.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
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

// What the guardian keeps between swapd's messages and its death. Static: the guardian is a forked
// copy of a multithreaded process and must not allocate; these arrays are its own (copy on write).
int g_groups[kMaxGroups];
int g_group_count = 0;
char g_cgroup[4096];      // the instance's cgroup directory; empty: none
char g_marker[128];       // "SWAPD_RUN=PID.START." to look for in environments; empty: none
char g_path[4096 + 64];   // scratch for file names
char g_environ[1 << 17];  // scratch for one process's environment
alignas(8) char g_dirents[8192];

// Copies `text` (len bytes) and a terminating NUL into `out` of `size` bytes, cutting if needed.
void CopyBounded(char* out, size_t size, const char* text, size_t len) {
  if (len >= size) len = size - 1;
  std::memmove(out, text, len);  // `text` may be `out` itself
  out[len] = '\0';
}

// out = a + b, cut to fit.
void JoinInto(char* out, size_t size, const char* a, const char* b) {
  size_t la = std::strlen(a);
  CopyBounded(out, size, a, la);
  if (la < size - 1) CopyBounded(out + la, size - la, b, std::strlen(b));
}

// g_path = a + b.
const char* Join(const char* a, const char* b) {
  JoinInto(g_path, sizeof(g_path), a, b);
  return g_path;
}

void Nap() {
  struct timespec ts = {0, 10 * 1000 * 1000};
  ::nanosleep(&ts, nullptr);
}

// Reads the file into `out` (NUL-terminated); returns the length, -1 when it cannot be opened.
long ReadSmall(const char* path, char* out, size_t size) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t len = 0;
  while (len < size - 1) {
    ssize_t n = ::read(fd, out + len, size - 1 - len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    len += static_cast<size_t>(n);
  }
  ::close(fd);
  out[len] = '\0';
  return static_cast<long>(len);
}

// Calls `visit(name)` for every entry of directory `dir` but "." and "..".
template <typename Visit>
void ForEachEntry(const char* dir, Visit visit) {
  int fd = ::open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  for (;;) {
    long n = ::syscall(SYS_getdents64, fd, g_dirents, sizeof(g_dirents));
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      auto* entry = reinterpret_cast<struct dirent64*>(g_dirents + off);
      off += entry->d_reclen;
      const char* name = entry->d_name;
      if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
      visit(name, entry->d_type);
    }
  }
  ::close(fd);
}

// SIGKILLs every process of the instance's cgroup tree, waits (up to 5 s) until it is empty and
// removes the run groups and the instance group.
void EndCgroup() {
  if (g_cgroup[0] == '\0') return;
  char dir[4096];
  CopyBounded(dir, sizeof(dir), g_cgroup, std::strlen(g_cgroup));
  char events[256];
  for (int round = 0; round < 500; ++round) {
    int fd = ::open(Join(dir, "/cgroup.kill"), O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {  // Linux 5.14+: the whole tree at once
      ssize_t ignored = ::write(fd, "1", 1);
      (void)ignored;
      ::close(fd);
    } else {  // older kernels: each process of each run group
      ForEachEntry(dir, [&](const char* name, unsigned char type) {
        if (type != DT_DIR) return;
        char leaf[4096 + 256];
        JoinInto(leaf, sizeof(leaf), dir, "/");
        JoinInto(leaf, sizeof(leaf), leaf, name);
        char procs[4096];
        if (ReadSmall(Join(leaf, "/cgroup.procs"), procs, sizeof(procs)) <= 0) return;
        long pid = 0;
        for (const char* c = procs; *c != '\0'; ++c) {
          if (*c >= '0' && *c <= '9') {
            pid = pid * 10 + (*c - '0');
          } else {
            if (pid > 1) ::kill(static_cast<pid_t>(pid), SIGKILL);
            pid = 0;
          }
        }
      });
    }
    if (ReadSmall(Join(dir, "/cgroup.events"), events, sizeof(events)) < 0) break;  // gone
    if (std::strstr(events, "populated 0") != nullptr) break;
    Nap();
  }
  ForEachEntry(dir, [&](const char* name, unsigned char type) {
    if (type != DT_DIR) return;
    char leaf[4096 + 256];
    JoinInto(leaf, sizeof(leaf), dir, "/");
    JoinInto(leaf, sizeof(leaf), leaf, name);
    ::rmdir(leaf);
  });
  ::rmdir(dir);
}

// True when the environment text (entries separated by NULs) has an entry starting with g_marker.
bool Marked(const char* env, long len) {
  const size_t want = std::strlen(g_marker);
  long at = 0;
  while (at < len) {
    size_t entry = std::strlen(env + at);
    if (entry >= want && std::memcmp(env + at, g_marker, want) == 0) return true;
    at += static_cast<long>(entry) + 1;
  }
  return false;
}

// SIGKILLs every process marked as one of this swapd's runs, in rounds until none is found (a
// double-forking daemon may fork between a scan and its kill; its child is marked too).
void EndMarked() {
  if (g_marker[0] == '\0') return;
  const pid_t self = ::getpid();
  for (int round = 0; round < 100; ++round) {
    int found = 0;
    ForEachEntry("/proc", [&](const char* name, unsigned char) {
      long pid = 0;
      for (const char* c = name; *c != '\0'; ++c) {
        if (*c < '0' || *c > '9') return;
        pid = pid * 10 + (*c - '0');
      }
      if (pid <= 1 || pid == self) return;
      char path[64];
      JoinInto(path, sizeof(path), "/proc/", name);
      JoinInto(path, sizeof(path), path, "/environ");
      long n = ReadSmall(path, g_environ, sizeof(g_environ));
      if (n > 0 && Marked(g_environ, n) && ::kill(static_cast<pid_t>(pid), SIGKILL) == 0) {
        ++found;
      }
    });
    if (found == 0) break;
    Nap();
  }
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

  g_group_count = 0;
  g_cgroup[0] = '\0';
  g_marker[0] = '\0';
  char buf[8192];
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
      const char* arg = buf + start + 1;
      const size_t arg_len = i - start - 1;
      long value = 0;
      for (size_t j = start + 1; j < i && buf[j] >= '0' && buf[j] <= '9'; ++j) {
        value = value * 10 + (buf[j] - '0');
      }
      int pgid = static_cast<int>(value);
      if (op == '+' && pgid > 1 && g_group_count < kMaxGroups) {
        g_groups[g_group_count++] = pgid;
      } else if (op == '-') {
        for (int k = 0; k < g_group_count; ++k) {
          if (g_groups[k] == pgid) {
            g_groups[k] = g_groups[--g_group_count];
            break;
          }
        }
      } else if (op == 'c') {
        CopyBounded(g_cgroup, sizeof(g_cgroup), arg, arg_len);
      } else if (op == 'm') {
        CopyBounded(g_marker, sizeof(g_marker), "SWAPD_RUN=", 10);
        CopyBounded(g_marker + 10, sizeof(g_marker) - 10, arg, arg_len);
        if (arg_len == 0) g_marker[0] = '\0';
      }
      start = i + 1;
    }
    std::memmove(buf, buf + start, len - start);
    len -= start;
    if (len == sizeof(buf)) len = 0;  // garbage without newlines: drop it
  }
  for (int k = 0; k < g_group_count; ++k) ::kill(-g_groups[k], SIGKILL);
  EndCgroup();
  EndMarked();
  ::_exit(0);
}

struct GuardianState {
  std::mutex mu;
  int pid = 0;           // Guarded by mu.
  int sock = -1;         // swapd's end. Guarded by mu.
  std::set<int> groups;  // registered pgids, to resend after a restart. Guarded by mu.
  std::string cgroup;    // Guardian::Contain's, to resend after a restart. Guarded by mu.
  std::string marker;    // Guarded by mu.
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
  SendLocked(s, "c" + s.cgroup + "\n");
  SendLocked(s, "m" + s.marker + "\n");
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

void Guardian::Contain(const std::string& cgroup_dir, const std::string& marker_prefix) {
  GuardianState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  s.cgroup = cgroup_dir;
  s.marker = marker_prefix;
  if (s.pid > 0 &&
      !(SendLocked(s, "c" + s.cgroup + "\n") && SendLocked(s, "m" + s.marker + "\n"))) {
    DropLocked(s);
    StartLocked(s);
  }
}

int Guardian::Pid() {
  GuardianState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.pid;
}

}  // namespace swapd
