#include "scoreboard/own_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "backends/port_check.h"
#include "scoreboard/bench_client.h"

namespace swapd {
namespace {

constexpr auto kStopGrace = std::chrono::seconds(60);

std::string SelfExe() {
  std::vector<char> path(4096);
  const ssize_t n = readlink("/proc/self/exe", path.data(), path.size() - 1);
  return n > 0 ? std::string(path.data(), n) : std::string();
}

// Waits for `pid` until `deadline`; true once reaped.
bool ReapBefore(pid_t pid, std::chrono::steady_clock::time_point deadline) {
  while (true) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

std::string LastLines(const std::string& path, size_t n) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  std::string out;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) {
    out += lines[i] + "\n";
  }
  return out;
}

Result<std::unique_ptr<OwnServer>> OwnServer::StartSwapd(const std::string& config_path,
                                                         const std::string& log_path,
                                                         std::chrono::seconds timeout) {
  const std::string exe = SelfExe();
  if (exe.empty()) return Status::Error(ErrorCode::kInternal, "cannot read /proc/self/exe");
  const int port = FreeLoopbackPort();
  if (port <= 0) return Status::Error(ErrorCode::kInternal, "no free loopback port");
  return Start({exe, "--config", config_path, "--listen", "127.0.0.1:" + std::to_string(port)},
               port, log_path, timeout, "swapd --config " + config_path);
}

Result<std::unique_ptr<OwnServer>> OwnServer::Start(std::vector<std::string> args, int port,
                                                    const std::string& log_path,
                                                    std::chrono::seconds timeout,
                                                    const std::string& name) {
  const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) {
    return Status::Error(ErrorCode::kInternal,
                         "cannot write " + log_path + ": " + std::strerror(errno));
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(log);
    return Status::Error(ErrorCode::kInternal, std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // SIGTERM, not SIGKILL: a swapd then stops its backends as at any shutdown (llama-server's
    // router its model instances).
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);  // the bench died before prctl
    const int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, STDIN_FILENO);
    dup2(log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(log);
  std::unique_ptr<OwnServer> own(
      new OwnServer(pid, "http://127.0.0.1:" + std::to_string(port), log_path));
  const BenchClient client(own->url(), "");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!client.Healthy()) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      own->reaped_ = true;
      return Status::Error(ErrorCode::kUnavailable, name + " exited at start; " + log_path +
                                                        " ends with:\n" + LastLines(log_path, 20));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::Error(ErrorCode::kTimeout, name + " did not answer /health within " +
                                                    std::to_string(timeout.count()) + " s; " +
                                                    log_path + " ends with:\n" +
                                                    LastLines(log_path, 20));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return own;
}

OwnServer::~OwnServer() { Stop(); }

void OwnServer::Stop() {
  if (reaped_) return;
  kill(pid_, SIGTERM);
  if (!ReapBefore(pid_, std::chrono::steady_clock::now() + kStopGrace)) {
    kill(pid_, SIGKILL);
    ReapBefore(pid_, std::chrono::steady_clock::time_point::max());
  }
  reaped_ = true;
}

}  // namespace swapd
