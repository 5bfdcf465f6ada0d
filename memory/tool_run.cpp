#include "memory/tool_run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

extern char** environ;

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxToolOutput = 16 * 1024 * 1024;

// The first line of what the tool said, trimmed and cut to a length fit for a log line.
std::string FirstLine(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  text = text.substr(0, text.find('\n'));
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return std::string(text.substr(0, 200));
}

}  // namespace

std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (!dirs.empty()) {
    size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    if (dir.empty()) continue;  // "." by POSIX; not something a daemon should trust
    std::string candidate = dir + (dir.back() == '/' ? "" : "/") + name;
    struct stat st;
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return "";
}

ToolRun RunTool(const std::string& path, const std::vector<std::string>& args,
                std::chrono::milliseconds timeout) {
  ToolRun run;
  const std::string name = path.substr(path.rfind('/') + 1);
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return {"", name + ": pipe: " + std::strerror(errno)};
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    run.failure = name + ": pipe: " + std::strerror(errno);
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return run;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);  // descriptors other threads opened
#endif
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> argv = {const_cast<char*>(path.c_str())};
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, path.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (spawned != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    run.failure = name + ": " + std::strerror(spawned);
    return run;
  }

  const Clock::time_point deadline = Clock::now() + timeout;
  std::string err;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&run.out, &err};
  int open_pipes = 2, status = 0;
  bool reaped = false, timed_out = false;
  while (!reaped) {
    // Rounded up: a wait of a truncated 0 ms would give up before the deadline.
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    if (open_pipes == 0) {  // output complete: wait for the exit
      pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid || (r < 0 && errno == ECHILD)) reaped = true;  // ECHILD: SIGCHLD ignored
      if (!reaped) ::poll(nullptr, 0, static_cast<int>(std::min<long>(left, 2)));
      continue;
    }
    if (::poll(fds, 2, static_cast<int>(left)) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[65536];
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0 && sinks[i]->size() < kMaxToolOutput) sinks[i]->append(buf, n);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_pipes;
      }
    }
  }
  if (!reaped) {
    // The tool leads its group and is not yet reaped, so -pid cannot name anyone else's group.
    ::kill(-pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  for (pollfd& fd : fds) {
    if (fd.fd >= 0) ::close(fd.fd);
  }
  if (timed_out) {
    run.failure = name + ": no answer within " + std::to_string(timeout.count()) + " ms (killed)";
  } else if (WIFSIGNALED(status)) {
    run.failure = name + ": killed by signal " + std::to_string(WTERMSIG(status));
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    const std::string said = FirstLine(err.empty() ? run.out : err);
    run.failure = name + ": exit status " + std::to_string(WEXITSTATUS(status)) +
                  (said.empty() ? "" : ": " + said);
  }
  return run;
}

}  // namespace swapd
