// The only file that includes Boost.Process. Boost.Process v1 performs the fork and the execve; the
// child's set-up is our own handler (its documented extension point, on_exec_setup), written with
// async-signal-safe calls only, as a child forked from a multithreaded process must be. We use
// `ignore_error` so that Boost's own error channel, which allocates a std::string in the child and
// reaps a failed child with WNOHANG (a zombie race), is never used: exec errors come back through
// our own CLOEXEC pipe as two ints, and we reap the failed child ourselves.
#include "backends/launcher.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/process/child.hpp>
#include <boost/process/error.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "backends/containment.h"
#include "backends/guardian.h"

extern char** environ;

namespace swapd {
namespace {

namespace bp = boost::process;

// What failed in the child before exec, reported through the error pipe.
enum ChildStep : int { kStepSetpgid = 1, kStepParentGone, kStepCgroup, kStepDup, kStepExec };

const char* StepName(int step) {
  switch (step) {
    case kStepSetpgid:
      return "setpgid";
    case kStepParentGone:
      return "parent exited";
    case kStepCgroup:
      return "join its cgroup";
    case kStepDup:
      return "dup2";
    default:
      return "exec";
  }
}

// Marks every descriptor >= 3 close-on-exec. Async-signal-safe: raw syscalls only.
void MarkCloexecFrom3() {
#ifdef SYS_close_range
  constexpr unsigned kCloseRangeCloexec = 1U << 2;  // CLOSE_RANGE_CLOEXEC, Linux >= 5.11
  if (::syscall(SYS_close_range, 3, ~0U, kCloseRangeCloexec) == 0) return;
#endif
  // Kernel < 5.11: walk /proc/self/fd with getdents64 (opendir would allocate).
  int dir = ::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    alignas(8) char buf[4096];
    for (;;) {
      long n = ::syscall(SYS_getdents64, dir, buf, sizeof(buf));
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        auto* entry = reinterpret_cast<struct dirent64*>(buf + off);
        int fd = 0;
        bool numeric = entry->d_name[0] != '\0';
        for (const char* c = entry->d_name; *c != '\0'; ++c) {
          if (*c < '0' || *c > '9') numeric = false;
          fd = fd * 10 + (*c - '0');
        }
        if (numeric && fd >= 3 && fd != dir) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
        off += entry->d_reclen;
      }
    }
    ::close(dir);
    return;
  }
  struct rlimit rl;
  long limit = ::getrlimit(RLIMIT_NOFILE, &rl) == 0 ? static_cast<long>(rl.rlim_cur) : 1024;
  if (limit > 65536 || limit < 0) limit = 65536;
  for (long fd = 3; fd < limit; ++fd) ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
}

[[noreturn]] void ReportAndExit(int error_fd, int step, int err) {
  int data[2] = {step, err};
  ssize_t ignored = ::write(error_fd, data, sizeof(data));
  (void)ignored;
  ::_exit(127);
}

// Our part of the child's start, as a Boost.Process v1 initializer. Everything it points to lives
// in SpawnOnThisThread's frame until the child has exec'd (or failed).
struct ChildSetup : bp::extend::handler {
  const char* exe;
  char* const* argv;
  char** envp;
  int stdin_fd;   // /dev/null
  int output_fd;  // write end of the stdout+stderr pipe
  int error_fd;   // write end of the error pipe (CLOEXEC: EOF on a successful exec)
  int cgroup_fd;  // the run's cgroup.procs, or -1
  pid_t parent;
  int* fork_errno;

  template <class Executor>
  void on_setup(Executor& exec) const {
    exec.exe = exe;
    exec.cmd_line = argv;
    exec.env = envp;
  }

  template <class Executor>
  void on_fork_error(Executor&, const std::error_code& ec) const {
    *fork_errno = ec.value();
  }

  // In the child, between fork and exec: async-signal-safe calls only.
  template <class Executor>
  void on_exec_setup(Executor&) const {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) {
      if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &sa, nullptr);
    }
    // Own process group, so that a stop (or the Guardian) reaches the backend's children too, and
    // a Ctrl-C meant for swapd does not.
    if (::setpgid(0, 0) != 0) ReportAndExit(error_fd, kStepSetpgid, errno);
    // Into the run's cgroup before anything runs: every process it makes starts there too.
    if (cgroup_fd >= 0 && ::write(cgroup_fd, "0", 1) != 1) {
      ReportAndExit(error_fd, kStepCgroup, errno);
    }
    // Die with swapd. If swapd died before this line, the signal will never come: exit now.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (::getppid() != parent) ReportAndExit(error_fd, kStepParentGone, 0);
    if (::dup2(stdin_fd, 0) < 0 || ::dup2(output_fd, 1) < 0 || ::dup2(output_fd, 2) < 0) {
      ReportAndExit(error_fd, kStepDup, errno);
    }
    MarkCloexecFrom3();  // inherit nothing but 0, 1, 2 (the error pipe closes at exec)
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
  }

  template <class Executor>
  void on_exec_error(Executor&, const std::error_code& ec) const {
    ReportAndExit(error_fd, kStepExec, ec.value());
  }
};

void CloseIf(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::string Errno(const std::string& what, int err) { return what + ": " + std::strerror(err); }

// Runs on the spawner thread.
Result<std::unique_ptr<ChildProcess>> SpawnOnThisThread(const SpawnRequest& request,
                                                        const std::string& exe,
                                                        std::vector<std::string> env,
                                                        std::unique_ptr<Cage> cage,
                                                        int* cgroup_errno) {
  if (Status s = Guardian::Start(); !s.ok()) return s;

  std::vector<char*> argv;
  for (const std::string& arg : request.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (std::string& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);

  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) return Status::Error(ErrorCode::kInternal, Errno("open /dev/null", errno));
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    int e = errno;
    CloseIf(out[0]), CloseIf(out[1]), CloseIf(null_fd);
    return Status::Error(ErrorCode::kInternal, Errno("pipe", e));
  }

  int fork_errno = 0;
  ChildSetup setup;
  setup.exe = exe.c_str();
  setup.argv = argv.data();
  setup.envp = envp.data();
  setup.stdin_fd = null_fd;
  setup.output_fd = out[1];
  setup.error_fd = err[1];
  setup.cgroup_fd = cage->join_fd();
  setup.parent = ::getpid();
  setup.fork_errno = &fork_errno;

  pid_t pid = -1;
  try {
    bp::child child(bp::exe = exe, bp::ignore_error, setup);
    pid = child.valid() ? child.id() : -1;
    child.detach();  // we reap it ourselves (ChildProcess::Wait)
  } catch (const std::exception& e) {
    pid = -1;
    if (fork_errno == 0) fork_errno = EAGAIN;
  }
  CloseIf(out[1]);
  CloseIf(err[1]);
  CloseIf(null_fd);
  if (pid <= 0) {
    CloseIf(out[0]), CloseIf(err[0]);
    return Status::Error(ErrorCode::kInternal, Errno("fork", fork_errno ? fork_errno : EAGAIN));
  }
  // Register at once: from here on, swapd dying must take the group with it.
  ::setpgid(pid, pid);  // also in the parent, so the group exists before we signal it
  Guardian::Watch(pid);

  int report[2] = {0, 0};
  ssize_t n;
  while ((n = ::read(err[0], report, sizeof(report))) < 0 && errno == EINTR) {
  }
  CloseIf(err[0]);
  cage->CloseJoinFd();
  auto child = std::make_unique<ChildProcess>(pid, out[0], /*watched=*/true, std::move(cage));
  if (n > 0) {
    child.reset();  // reaps the failed child and unregisters its group
    std::string why = report[0] == kStepParentGone
                          ? "parent exited"
                          : std::string(StepName(report[0])) + ": " + std::strerror(report[1]);
    Status failed = Status::Error(ErrorCode::kBackendFailed,
                                  "cannot start \"" + request.argv[0] + "\" (" + exe + "): " + why);
    if (report[0] == kStepCgroup) *cgroup_errno = report[1];
    return failed;
  }
  return child;
}

// One thread that forks every child and lives until the process ends.
class SpawnerThread {
 public:
  SpawnerThread() {
    std::thread([this] { Run(); }).detach();
  }

  void Post(std::function<void()> task) {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(task));
    cv_.notify_one();
  }

 private:
  void Run() {
    // No signal handler may run on this thread, nor in a child between fork and its set-up.
    sigset_t all;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, nullptr);
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return !tasks_.empty(); });
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;  // Guarded by mu_.
};

class RealLauncher : public Launcher {
 public:
  Result<std::unique_ptr<ChildProcess>> Spawn(const SpawnRequest& request) override {
    if (request.argv.empty()) {
      return Status::Error(ErrorCode::kInvalidArgument, "empty command line");
    }
    std::optional<std::string> path = FindEnvValue(MergeEnvironment(environ, request.env), "PATH");
    Result<std::string> exe = FindExecutable(request.argv[0], path ? &*path : nullptr);
    if (!exe.ok()) return exe.status();

    for (int attempt = 1;; ++attempt) {
      Result<std::unique_ptr<Cage>> cage = containment::NewCage(request.model_id);
      if (!cage.ok()) return cage.status();
      EnvPairs extra = request.env;
      for (auto& pair : cage.value()->MarkerEnv(request.model_id)) extra.push_back(pair);
      std::vector<std::string> env = MergeEnvironment(environ, extra);
      int cgroup_errno = 0;
      std::promise<Result<std::unique_ptr<ChildProcess>>> promise;
      auto future = promise.get_future();
      spawner_.Post([&] {
        promise.set_value(SpawnOnThisThread(request, exe.value(), std::move(env),
                                            std::move(cage).value(), &cgroup_errno));
      });
      Result<std::unique_ptr<ChildProcess>> child = future.get();
      // A child that could not join its cgroup (a delegation that stopped working): once more,
      // with markers, unless cgroups are required.
      if (!child.ok() && cgroup_errno != 0 && attempt == 1 &&
          containment::CgroupJoinFailed(cgroup_errno)) {
        continue;
      }
      return child;
    }
  }

 private:
  SpawnerThread spawner_;
};

}  // namespace

Launcher& DefaultLauncher() {
  static auto* launcher = new RealLauncher();  // never destroyed: its thread runs until exit
  return *launcher;
}

}  // namespace swapd
