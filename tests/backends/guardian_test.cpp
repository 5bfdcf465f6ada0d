// "No orphans, ever": when swapd dies by SIGKILL, its backends and their children die too. The
// backend-driver stands in for swapd: it runs a fake llama-server that has a grandchild.
#include "backends/guardian.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <sstream>

#include "backends/launcher.h"
#include "tests/backends/backend_test_util.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;
using backend_testing::ProcessRunning;

// Reads the driver's output until a whole line starting with `last` arrived (or 30 s pass).
std::string ReadUntilLine(ChildProcess& child, const std::string& last) {
  std::string out;
  auto deadline = Clock::now() + std::chrono::seconds(30);
  char buf[4096];
  auto done = [&] {
    size_t at = out.find("\n" + last);
    return at != std::string::npos && out.find('\n', at + 1) != std::string::npos;
  };
  while (Clock::now() < deadline && !done()) {
    struct pollfd pfd = {child.output_fd(), POLLIN, 0};
    ::poll(&pfd, 1, 100);
    ssize_t n = ::read(child.output_fd(), buf, sizeof(buf));
    if (n == 0) break;
    if (n > 0) out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

TEST_CASE("Guardian: SIGKILL of swapd takes its backends and their children along",
          "[integration][backend]") {
  auto spawned = DefaultLauncher().Spawn({{BACKEND_DRIVER_BINARY, FAKE_BACKEND_BINARY}, {}});
  REQUIRE(spawned.ok());
  std::unique_ptr<ChildProcess> driver = std::move(spawned).value();
  std::string out = "\n" + ReadUntilLine(*driver, "guardian ");
  INFO("driver said: " << out);
  int backend = 0, guardian = 0;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {  // the driver's own log lines come first
    std::sscanf(line.c_str(), "backend %d", &backend);
    std::sscanf(line.c_str(), "guardian %d", &guardian);
  }
  REQUIRE(backend > 0);
  REQUIRE(guardian > 0);
  // The fake backend's grandchild is in its process group.
  std::vector<int> group;
  REQUIRE(backend_testing::WaitFor([&] {
    group = backend_testing::GroupMembers(backend);
    return group.size() >= 2;
  }));
  CHECK(backend_testing::ReadProcStat(guardian).ppid == driver->pid());

  REQUIRE(::kill(driver->pid(), SIGKILL) == 0);
  driver->Wait();
  auto killed = Clock::now();
  bool gone = backend_testing::WaitFor(
      [&] {
        for (int pid : group) {
          if (ProcessRunning(pid)) return false;
        }
        return !ProcessRunning(guardian);
      },
      std::chrono::seconds(10));
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - killed);
  INFO("backend group " << group.size() << " processes, gone after " << took.count() << " ms");
  CHECK(gone);
  CHECK(took.count() < 3000);  // the target is well under a second; slack for a loaded machine
}

}  // namespace
}  // namespace swapd
