// Containment's parts: where this process's cgroup is (from /proc texts), environment markers, a
// start time that names one live process, and a real run whose server leaves its process group.
#include "backends/containment.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "backends/cgroup.h"
#include "backends/launcher.h"
#include "backends/proc_scan.h"
#include "tests/backends/backend_test_util.h"

namespace swapd {
namespace {

using namespace std::chrono_literals;

const char kMountinfo[] =
    "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
    "30 25 0:26 / /sys/fs/cgroup ro,nosuid shared:9 - tmpfs tmpfs ro,mode=755\n"
    "31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid shared:10 - cgroup2 cgroup2 rw\n"
    "32 30 0:28 / /sys/fs/cgroup/memory rw,nosuid shared:11 - cgroup cgroup rw,memory\n";

TEST_CASE("cgroup: this process's cgroup v2 directory from mountinfo and /proc/self/cgroup",
          "[unit][containment]") {
  SECTION("a systemd service on a unified machine") {
    auto dir = cgroup::OwnDirectoryFrom(
        "29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev shared:4 - cgroup2 cgroup2 rw\n",
        "0::/system.slice/swapd.service\n");
    REQUIRE(dir.ok());
    CHECK(dir.value() == "/sys/fs/cgroup/system.slice/swapd.service");
  }
  SECTION("a hybrid machine: cgroup2 under unified/, the root group") {
    auto dir = cgroup::OwnDirectoryFrom(kMountinfo, "4:memory:/x\n0::/\n");
    REQUIRE(dir.ok());
    CHECK(dir.value() == "/sys/fs/cgroup/unified");
  }
  SECTION("a container whose mount shows only its own subtree, a path with a space") {
    auto dir = cgroup::OwnDirectoryFrom(
        "40 30 0:30 /docker/abc /sys/fs/my\\040cg rw - cgroup2 cgroup2 rw\n",
        "0::/docker/abc/inner\n");
    REQUIRE(dir.ok());
    CHECK(dir.value() == "/sys/fs/my cg/inner");
  }
  SECTION("cgroup v1 only: no cgroup2 mount") {
    auto dir = cgroup::OwnDirectoryFrom(
        "32 30 0:28 / /sys/fs/cgroup/memory rw - cgroup cgroup rw\n", "0::/\n");
    REQUIRE_FALSE(dir.ok());
    CHECK_THAT(dir.status().message(), Catch::Contains("no cgroup v2"));
  }
  SECTION("no 0:: line") {
    auto dir = cgroup::OwnDirectoryFrom(kMountinfo, "4:memory:/x\n");
    REQUIRE_FALSE(dir.ok());
    CHECK_THAT(dir.status().message(), Catch::Contains("0::"));
  }
}

TEST_CASE("proc: environment values and start times", "[unit][containment]") {
  const char text[] = "A=1\0SWAPD_RUN=12.34.5\0EMPTY=\0A=2\0";
  const std::string env(text, sizeof(text) - 1);
  CHECK(proc::EnvValueIn(env, "SWAPD_RUN") == "12.34.5");
  CHECK(proc::EnvValueIn(env, "A") == "2");  // the last one wins, as getenv of the child sees it
  CHECK(proc::EnvValueIn(env, "EMPTY") == "");
  CHECK(proc::EnvValueIn(env, "SWAPD") == std::nullopt);
  CHECK(ParseContainmentMode("cgroup") == ContainmentMode::kCgroup);
  CHECK(ParseContainmentMode("systemd") == std::nullopt);

  REQUIRE(proc::StartTime(::getpid()).has_value());
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  REQUIRE(child > 0);
  // Exited, not reaped: a zombie is no longer the process its start time named.
  CHECK(backend_testing::WaitFor([&] { return !proc::StartTime(child).has_value(); }));
  ::waitpid(child, nullptr, 0);
}

TEST_CASE("Cage: a run's server that left its process group is found, counted and killed",
          "[integration][containment]") {
  auto spawned = DefaultLauncher().Spawn(
      {{"/bin/sh", "-c", "setsid sleep 300 & echo \"server $!\"; wait"}, {}, "cage-model"});
  REQUIRE(spawned.ok());
  std::unique_ptr<ChildProcess> child = std::move(spawned).value();
  REQUIRE(child->scope());
  const RunScope scope = *child->scope();
  INFO("containment: " << containment::Describe() << ", run " << scope.marker);
  CHECK(scope.marker.rfind(containment::InstanceMarker(), 0) == 0);
  std::vector<int> pids;
  REQUIRE(backend_testing::WaitFor([&] {
    pids = ScopePids(scope);
    return pids.size() == 2;
  }));
  const int server = pids[0] == child->pid() ? pids[1] : pids[0];
  // setsid: out of the group (once it has run setsid(2))
  CHECK(backend_testing::WaitFor([&] { return ::getpgid(server) != child->pgid(); }));
  CHECK(proc::EnvValue(server, kModelEnv) == "cage-model");
  CHECK(proc::EnvValue(server, kRunEnv) == scope.marker);
  if (!scope.cgroup.empty()) CHECK(cgroup::Procs(scope.cgroup) == pids);

  CHECK(child->SignalAll(SIGKILL));  // both get it: the group's leader and the server
  child->Wait();
  CHECK(backend_testing::WaitFor([&] { return !backend_testing::ProcessRunning(server); }));
  CHECK_FALSE(child->AnyAlive());
  child.reset();
  if (!scope.cgroup.empty()) CHECK(::access(scope.cgroup.c_str(), F_OK) != 0);  // removed
}

}  // namespace
}  // namespace swapd
