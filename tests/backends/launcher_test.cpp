#include "backends/launcher.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>

#include "backends/guardian.h"
#include "tests/backends/backend_test_util.h"

namespace swapd {
namespace {

using backend_testing::ZombieChildren;

// Everything the child writes until EOF (or 20 s).
std::string ReadAll(ChildProcess& child) {
  std::string out;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  char buf[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    struct pollfd pfd = {child.output_fd(), POLLIN, 0};
    ::poll(&pfd, 1, 100);
    ssize_t n = ::read(child.output_fd(), buf, sizeof(buf));
    if (n == 0) break;
    if (n > 0) out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

std::unique_ptr<ChildProcess> SpawnOrFail(const SpawnRequest& request) {
  auto spawned = DefaultLauncher().Spawn(request);
  INFO(spawned.status().message());
  REQUIRE(spawned.ok());
  return std::move(spawned).value();
}

// "SigBlk:\t0000000000000000" -> true when the mask in that line of /proc/<pid>/status is empty.
bool StatusMaskEmpty(int pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) {
      return line.find_first_not_of("0", line.find_first_not_of(" \t", field.size() + 1)) ==
             std::string::npos;
    }
  }
  return false;
}

TEST_CASE("Launcher: the child inherits only stdin (/dev/null), stdout and stderr",
          "[integration][backend]") {
  // Descriptors a careless spawn would leak: one without CLOEXEC and a listening socket.
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);  // no O_CLOEXEC on purpose
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(listener >= 0);
  auto child = SpawnOrFail({{"/bin/sleep", "30"}, {}});
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  ::close(listener);
  // Look at sleep's descriptors from here once exec is complete. /proc/PID/exe names sleep a
  // moment before the kernel closes the close-on-exec descriptors (exec switches the memory map
  // first), so wait until both hold: a descriptor that leaked would stay, and the wait fail.
  const std::string fd_dir = "/proc/" + std::to_string(child->pid()) + "/fd";
  std::map<int, std::string> fds;
  const bool settled = backend_testing::WaitFor([&] {
    std::error_code ec;
    if (std::filesystem::read_symlink("/proc/" + std::to_string(child->pid()) + "/exe", ec)
            .filename() != "sleep") {
      return false;
    }
    fds.clear();
    for (const auto& entry : std::filesystem::directory_iterator(fd_dir, ec)) {
      fds[std::stoi(entry.path().filename().string())] =
          std::filesystem::read_symlink(entry.path(), ec).string();
    }
    return fds.size() == 3;
  });
  INFO("descriptors of the child: " << fds.size());
  CHECK(settled);
  CHECK(StatusMaskEmpty(child->pid(), "SigBlk"));
  CHECK(StatusMaskEmpty(child->pid(), "SigIgn"));
  CHECK(child->SignalAll(SIGKILL));
  CHECK(WTERMSIG(child->Wait()) == SIGKILL);
  REQUIRE(fds.size() == 3);
  CHECK(fds[0] == "/dev/null");
  CHECK(fds[1].rfind("pipe:", 0) == 0);
  CHECK(fds[2] == fds[1]);
}

TEST_CASE("Launcher: own process group, parent is swapd, exit status is reported",
          "[integration][backend]") {
  auto child = SpawnOrFail({{"/bin/sh", "-c", "sleep 0.2; exit 7"}, {}});
  backend_testing::ProcStat st = backend_testing::ReadProcStat(child->pid());
  CHECK(st.pgrp == child->pid());
  CHECK(st.ppid == ::getpid());
  CHECK(child->AnyAlive());
  CHECK(WEXITSTATUS(child->Wait()) == 7);
  CHECK(DescribeWaitStatus(child->Wait()) == "exit code 7");  // idempotent
  child.reset();
  CHECK(ZombieChildren().empty());
  CHECK(Guardian::Pid() > 0);
}

TEST_CASE("Launcher: a bare command name is found in the CHILD's PATH", "[integration][backend]") {
  std::string dir = std::filesystem::path(FAKE_BACKEND_BINARY).parent_path().string();
  std::string name = std::filesystem::path(FAKE_BACKEND_BINARY).filename().string();
  auto child = SpawnOrFail({{name, "--help"}, {{"PATH", dir + ":/usr/bin:/bin"}}});
  std::string out = ReadAll(*child);
  CHECK(WEXITSTATUS(child->Wait()) == 0);
  CHECK_THAT(out, Catch::Contains("--spawn-grandchild"));

  auto missing = DefaultLauncher().Spawn({{name, "--help"}, {{"PATH", "/nonexistent"}}});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == ErrorCode::kBackendFailed);
  CHECK_THAT(missing.status().message(), Catch::Contains("not found in PATH (/nonexistent)"));
}

TEST_CASE("Launcher: an exec failure is an error value and leaves no zombie",
          "[integration][backend]") {
  std::string path =
      std::filesystem::temp_directory_path() / ("swapd-notexec-" + std::to_string(::getpid()));
  {
    std::ofstream(path) << "\x7f"
                           "garbage, no shebang\n";
  }
  ::chmod(path.c_str(), 0755);
  auto spawned = DefaultLauncher().Spawn({{path}, {}});
  std::filesystem::remove(path);
  REQUIRE_FALSE(spawned.ok());
  CHECK(spawned.status().code() == ErrorCode::kBackendFailed);
  CHECK_THAT(spawned.status().message(), Catch::Contains("exec: Exec format error"));
  CHECK(ZombieChildren().empty());
}

TEST_CASE("Launcher: the environment is swapd's plus the model's, K= present and empty",
          "[integration][backend]") {
  ::setenv("SWAPD_TEST_INHERITED", "from-swapd", 1);
  ::setenv("SWAPD_TEST_OVERRIDDEN", "old", 1);
  auto child = SpawnOrFail({{"/bin/sh", "-c",
                             "echo \"inh=$SWAPD_TEST_INHERITED ovr=$SWAPD_TEST_OVERRIDDEN "
                             "cuda=${CUDA_VISIBLE_DEVICES-UNSET}${CUDA_VISIBLE_DEVICES+SET}\""},
                            {{"SWAPD_TEST_OVERRIDDEN", "new"}, {"CUDA_VISIBLE_DEVICES", ""}}});
  std::string out = ReadAll(*child);
  child->Wait();
  CHECK(out == "inh=from-swapd ovr=new cuda=SET\n");
  ::unsetenv("SWAPD_TEST_INHERITED");
  ::unsetenv("SWAPD_TEST_OVERRIDDEN");
}

}  // namespace
}  // namespace swapd
