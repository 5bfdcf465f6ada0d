#include "tests/support/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>

extern char** environ;

namespace swapd::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> BuildEnvironment(const SubprocessSpec& spec) {
  std::vector<std::string> order;
  std::map<std::string, std::string> values;
  auto set = [&](const std::string& entry) {
    const size_t eq = entry.find('=');
    const std::string name = entry.substr(0, eq);
    if (!values.count(name)) order.push_back(name);
    values[name] = eq == std::string::npos ? "" : entry.substr(eq + 1);
  };
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) set(*e);
  for (const std::string& name : spec.unset_env) values.erase(name);
  for (const std::string& entry : spec.env) set(entry);
  std::vector<std::string> env;
  for (const std::string& name : order) {
    if (auto it = values.find(name); it != values.end()) env.push_back(name + "=" + it->second);
  }
  return env;
}

// Resolves a bare program name on the PATH of the child's environment, as execvp would.
std::optional<std::string> ResolveProgram(const std::string& program,
                                          const std::vector<std::string>& env) {
  if (program.find('/') != std::string::npos) return program;
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const std::string& entry : env) {
    if (entry.rfind("PATH=", 0) == 0) path = entry.substr(5);
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

ExitStatus FromWaitStatus(int status) {
  ExitStatus result;
  if (WIFEXITED(status)) {
    result.exited = true;
    result.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

// Reports errno to the parent through the exec-error pipe and exits. Async-signal-safe.
[[noreturn]] void FailChild(int error_fd) {
  int err = errno;
  [[maybe_unused]] ssize_t n = ::write(error_fd, &err, sizeof(err));
  ::_exit(127);
}

// Runs in the forked child: only async-signal-safe calls until execve.
[[noreturn]] void ExecChild(const char* program, char* const* argv, char* const* envp,
                            const char* working_dir, bool own_group, pid_t parent, int out_fd,
                            int null_fd, int error_fd) {
  if (own_group) ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);  // the test died before prctl took effect
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);
  }
  if (::dup2(null_fd, STDIN_FILENO) < 0 || ::dup2(out_fd, STDOUT_FILENO) < 0 ||
      ::dup2(out_fd, STDERR_FILENO) < 0) {
    FailChild(error_fd);
  }
  // Descriptors the test process left open without O_CLOEXEC (sockets, pipes) must not leak.
  if (error_fd > 3) ::close_range(3, error_fd - 1, 0);
  ::close_range(error_fd + 1, ~0U, 0);
  if (working_dir != nullptr && ::chdir(working_dir) != 0) FailChild(error_fd);
  ::execve(program, argv, envp);
  FailChild(error_fd);
}

}  // namespace

std::string ExitStatus::ToString() const {
  if (exited) return "exit code " + std::to_string(code);
  return "killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
}

Result<std::unique_ptr<Subprocess>> Subprocess::Start(SubprocessSpec spec) {
  if (spec.argv.empty()) return Status::Error(ErrorCode::kInvalidArgument, "empty argv");
  std::vector<std::string> env = BuildEnvironment(spec);
  std::optional<std::string> program = ResolveProgram(spec.argv[0], env);
  if (!program) {
    return Status::Error(ErrorCode::kNotFound, spec.argv[0] + ": not found on PATH");
  }
  std::vector<char*> argv = CStrings(spec.argv);
  std::vector<char*> envp = CStrings(env);

  int out_pipe[2];
  int error_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    return Status::Error(ErrorCode::kInternal, std::string("pipe: ") + std::strerror(errno));
  }
  if (::pipe2(error_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return Status::Error(ErrorCode::kInternal, std::string("pipe: ") + std::strerror(errno));
  }
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ExecChild(program->c_str(), argv.data(), envp.data(),
              spec.working_dir.empty() ? nullptr : spec.working_dir.c_str(), spec.own_process_group,
              parent, out_pipe[1], null_fd, error_pipe[1]);
  }
  const int fork_errno = errno;
  ::close(out_pipe[1]);
  ::close(error_pipe[1]);
  if (null_fd >= 0) ::close(null_fd);
  if (pid < 0) {
    ::close(out_pipe[0]);
    ::close(error_pipe[0]);
    return Status::Error(ErrorCode::kInternal, std::string("fork: ") + std::strerror(fork_errno));
  }
  // Set the group from both sides so that it exists before anyone signals it.
  if (spec.own_process_group) ::setpgid(pid, pid);

  int exec_errno = 0;
  ssize_t n;
  do {
    n = ::read(error_pipe[0], &exec_errno, sizeof(exec_errno));
  } while (n < 0 && errno == EINTR);
  ::close(error_pipe[0]);
  if (n == sizeof(exec_errno)) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(out_pipe[0]);
    return Status::Error(ErrorCode::kInternal,
                         "cannot execute " + *program + ": " + std::strerror(exec_errno));
  }
  const pid_t pgid = spec.own_process_group ? pid : ::getpgrp();
  return std::unique_ptr<Subprocess>(
      new Subprocess(pid, pgid, out_pipe[0], spec.own_process_group));
}

Subprocess::Subprocess(pid_t pid, pid_t pgid, int output_fd, bool own_group)
    : pid_(pid), pgid_(pgid), own_group_(own_group), output_fd_(output_fd) {
  reader_ = std::thread([this] { ReadOutput(); });
}

Subprocess::~Subprocess() {
  Kill();
  if (own_group_) ::kill(-pgid_, SIGKILL);  // grandchildren outlive a reaped leader
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_reading_ = true;
  }
  reader_.join();
  ::close(output_fd_);
}

void Subprocess::ReadOutput() {
  const bool echo = std::getenv("SWAPD_TEST_ECHO") != nullptr;
  std::string partial;
  char buffer[8192];
  auto add_line = [&](std::string line) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (echo) std::cerr << "[" << pid_ << "] " << line << std::endl;
    std::lock_guard<std::mutex> lock(mu_);
    lines_.push_back(std::move(line));
  };
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_reading_) break;
    }
    // Poll with a timeout so that the destructor is never stuck behind a process outside the
    // group that still holds the write end.
    pollfd pfd = {output_fd_, POLLIN, 0};
    int ready = ::poll(&pfd, 1, 50);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    ssize_t n = ::read(output_fd_, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: every writer is gone
    partial.append(buffer, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = partial.find('\n', start)) != std::string::npos; start = nl + 1) {
      add_line(partial.substr(start, nl - start));
    }
    partial.erase(0, start);
    lines_changed_.notify_all();
  }
  if (!partial.empty()) add_line(partial);
  std::lock_guard<std::mutex> lock(mu_);
  output_ended_ = true;
  lines_changed_.notify_all();
}

std::optional<std::string> Subprocess::WaitForLine(std::string_view prefix,
                                                   std::chrono::milliseconds timeout) {
  return WaitForLineMatching(
      [prefix](std::string_view line) { return line.substr(0, prefix.size()) == prefix; }, timeout);
}

std::optional<std::string> Subprocess::WaitForLineMatching(
    const std::function<bool(std::string_view)>& match, std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  std::unique_lock<std::mutex> lock(mu_);
  size_t checked = 0;
  for (;;) {
    for (; checked < lines_.size(); ++checked) {
      if (match(lines_[checked])) return lines_[checked];
    }
    if (output_ended_) return std::nullopt;
    if (lines_changed_.wait_until(lock, deadline) == std::cv_status::timeout &&
        checked == lines_.size()) {
      return std::nullopt;
    }
  }
}

std::vector<std::string> Subprocess::Lines() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lines_;
}

std::string Subprocess::Output() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const std::string& line : lines_) out += line + "\n";
  return out;
}

bool Subprocess::Signal(int sig) {
  std::lock_guard<std::mutex> lock(reap_mu_);
  if (own_group_) return ::kill(-pgid_, sig) == 0;
  if (exit_status_) return false;  // the pid may already belong to someone else
  return ::kill(pid_, sig) == 0;
}

bool Subprocess::TryReapLocked(int flags) {
  if (exit_status_) return true;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, flags);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    exit_status_ = FromWaitStatus(status);
    return true;
  }
  if (r < 0) {  // ECHILD: someone else reaped it; nothing more can be learned
    exit_status_ = ExitStatus{};
    return true;
  }
  return false;
}

std::optional<ExitStatus> Subprocess::WaitForExit(std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(reap_mu_);
      if (TryReapLocked(WNOHANG)) return exit_status_;
    }
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool Subprocess::Running() {
  std::lock_guard<std::mutex> lock(reap_mu_);
  return !TryReapLocked(WNOHANG);
}

ExitStatus Subprocess::Kill() {
  std::lock_guard<std::mutex> lock(reap_mu_);
  if (!exit_status_) {
    ::kill(own_group_ ? -pgid_ : pid_, SIGKILL);
    TryReapLocked(0);
  }
  return *exit_status_;
}

}  // namespace swapd::testing
