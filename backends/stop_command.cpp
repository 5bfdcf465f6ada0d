#include "backends/stop_command.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace swapd {

std::vector<std::string> SubstitutePid(const std::vector<std::string>& argv, int pid) {
  static const std::string kPid = "${PID}";
  const std::string value = std::to_string(pid);
  std::vector<std::string> out;
  for (std::string word : argv) {
    for (size_t at = word.find(kPid); at != std::string::npos;
         at = word.find(kPid, at + value.size())) {
      word.replace(at, kPid.size(), value);
    }
    out.push_back(std::move(word));
  }
  return out;
}

Status RunStopCommand(Launcher& launcher, const SpawnRequest& request,
                      std::chrono::steady_clock::time_point deadline,
                      const LineSplitter::LineFn& on_line) {
  auto spawned = launcher.Spawn(request);
  if (!spawned.ok()) return spawned.status();
  std::unique_ptr<ChildProcess> child = std::move(spawned).value();
  LineSplitter splitter(on_line);
  char buf[16 * 1024];
  bool out_open = true;
  bool exited = false;
  // Read until it exits, then what it left in the pipe (a child of it may keep the pipe open: we
  // do not wait for EOF after the exit).
  while (!exited) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    struct pollfd fds[2] = {{child->exit_fd(), POLLIN, 0}, {child->output_fd(), POLLIN, 0}};
    int n = ::poll(fds, out_open ? 2 : 1, static_cast<int>(left.count()));
    if (n < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) exited = true;
    if (out_open && (fds[1].revents != 0 || exited)) {
      for (;;) {
        ssize_t got = ::read(child->output_fd(), buf, sizeof(buf));
        if (got > 0) {
          splitter.Feed(std::string_view(buf, static_cast<size_t>(got)));
          continue;
        }
        if (got == 0) out_open = false;
        break;  // EAGAIN: nothing more for now
      }
    }
  }
  splitter.Flush();
  if (!exited) {
    child->SignalAll(SIGKILL);
    child->Wait();
    return Status::Error(ErrorCode::kTimeout, "still running after the grace period: killed");
  }
  child->SignalAll(SIGKILL);  // whatever it left behind in its group
  int status = child->Wait();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  return Status::Error(ErrorCode::kBackendFailed, DescribeWaitStatus(status));
}

}  // namespace swapd
