// Containment with the real swapd: backends whose command starts its server in a new session
// (`setsid server & wait`), daemonizes it (double fork), or starts one that ignores SIGTERM, leave
// nothing behind after a swap, an unload, a ttl, a reload, a shutdown, a kill -9 of swapd, and a
// kill -9 of swapd and its guardian (the next swapd of the config stops them). Each case runs with
// `--containment auto` (cgroup v2 where this machine lets swapd make groups) and with markers.
// A process is looked for twice: by its command line, and by swapd's markers in /proc.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "backends/cgroup.h"
#include "backends/containment.h"
#include "backends/proc_scan.h"
#include "tests/support/http_wait.h"
#include "tests/support/proc_file.h"
#include "tests/support/swapd_process.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;

// How each kind of backend starts its server. NEEDLE goes into the server's --model, so its
// command line can be found; the server always leaves the backend's process group and session.
std::string TreeCommand(const std::string& tree, const std::string& needle, int port) {
  const std::string server = std::string(FAKE_BACKEND_BINARY) + " --port " + std::to_string(port) +
                             " --model " + needle + " --quiet-load";
  if (tree == "setsid") return "bash -c 'setsid " + server + " & wait'";
  if (tree == "daemon") {  // the server's parent exits at once: it is reparented, in a new session
    return "bash -c '( setsid " + server + " & ); while true; do sleep 0.2; done'";
  }
  return "bash -c 'setsid " + server + " --ignore-sigterm & wait'";  // "stubborn"
}

struct Case {
  std::string mode;  // --containment
  std::string tree;  // setsid, daemon, stubborn
  // Each model's own port, picked free by the system (not startPort + n: a port next to a free
  // one may be any client socket's).
  int tree_port = FreeLoopbackPort();
  int ttl_port = FreeLoopbackPort();
  int other_port = FreeLoopbackPort();
  std::string Needle(const std::string& what) const {
    return "ctree-" + mode + "-" + tree + "-" + what;
  }
};

std::string ModelYaml(const std::string& id, const std::string& cmd, int port,
                      const std::string& extra = "") {
  return "  " + id + ":\n    cmd: " + cmd +
         "\n    proxy: http://127.0.0.1:" + std::to_string(port) + "\n" + extra;
}

std::string CaseYaml(const Case& c, const std::string& main_needle) {
  return "models:\n" +
         ModelYaml("tree", TreeCommand(c.tree, main_needle, c.tree_port), c.tree_port,
                   "    unloadTimeout: 1\n") +
         ModelYaml("tree-ttl", TreeCommand(c.tree, c.Needle("ttl"), c.ttl_port), c.ttl_port,
                   "    unloadTimeout: 1\n    ttl: 1\n") +
         ModelYaml("other",
                   std::string(FAKE_BACKEND_BINARY) + " --port " + std::to_string(c.other_port) +
                       " --model " + c.Needle("other"),
                   c.other_port);
}

// Processes whose environment marks them as `model`'s of the swapd running `config_path`.
std::vector<int> Marked(const std::string& config_path, const std::string& model) {
  std::vector<int> out;
  for (int pid : proc::PidsWithEnv(kConfigEnv, config_path)) {
    if (proc::EnvValue(pid, kModelEnv) == model) out.push_back(pid);
  }
  return out;
}

// Starts `model` through swapd and returns the pid of its server (which left the group).
int StartTree(const SwapdInstance& swapd, const std::string& model, const std::string& needle) {
  const int status = ChatStatus(swapd.base_url, model);
  INFO("swapd's log:\n" << swapd.process->Output());
  REQUIRE(status == 200);
  int server = 0;
  REQUIRE(WaitFor(
      [&] {
        for (int pid : PidsWithArg(needle)) {
          if (proc::ReadText("/proc/" + std::to_string(pid) + "/comm").rfind("fake", 0) == 0) {
            server = pid;
          }
        }
        return server > 0;
      },
      20s));
  INFO("server " << server << " of " << model);
  // It really escaped: a session (and so a process group) of its own.
  CHECK(::getsid(server) == server);
  CHECK_FALSE(Marked(swapd.config_path, model).empty());
  return server;
}

// Nothing of `model` is left: neither by command line nor by marker.
void ExpectGone(const SwapdInstance& swapd, const std::string& model, const std::string& needle,
                const std::string& after) {
  INFO("after " << after << ", model " << model);
  CHECK(NoneWithArgWithin(needle, 20s));
  CHECK(WaitFor([&] { return Marked(swapd.config_path, model).empty(); }, 20s));
}

Result<SwapdInstance> StartCase(const Case& c, const std::string& yaml) {
  return StartSwapd(yaml, {"--containment", c.mode});
}

// Whether this test's own cgroup holds a group whose name starts with `prefix`.
bool HasGroupNamed(const std::string& prefix) {
  auto own = cgroup::OwnDirectory();
  if (!own.ok()) return false;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(own.value(), ec)) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// The guardian swapd forked (its child named swapd-guardian); 0 when none runs.
int GuardianOf(int swapd_pid) {
  for (const ProcStat& st : AllProcesses()) {
    if (st.ppid != swapd_pid || st.state == 'Z' || st.state == 'X') continue;
    if (ReadProcFile("/proc/" + std::to_string(st.pid) + "/comm").rfind("swapd-guardian", 0) == 0) {
      return st.pid;
    }
  }
  return 0;
}

TEST_CASE("containment: no process of a backend's tree survives any stop or swapd's death",
          "[integration][containment]") {
  const Case c{GENERATE(as<std::string>{}, "auto", "marker"),
               GENERATE(as<std::string>{}, "setsid", "daemon", "stubborn")};
  INFO("--containment " << c.mode << ", tree " << c.tree);
  const std::string yaml = CaseYaml(c, c.Needle("main"));

  {  // swap, unload, ttl and reload, with one swapd
    auto swapd = StartCase(c, yaml);
    REQUIRE(swapd.ok());
    const SwapdInstance& s = swapd.value();
    if (c.mode == "auto" && cgroup::OwnDirectory().ok()) {
      INFO(s.process->Output());
      CHECK(s.process->WaitForLineMatching(
          [](std::string_view line) { return line.find("containment of backend") != line.npos; },
          10s));
    }
    StartTree(s, "tree", c.Needle("main"));
    REQUIRE(ChatStatus(s.base_url, "other") == 200);  // swaps "tree" out
    ExpectGone(s, "tree", c.Needle("main"), "a swap");

    StartTree(s, "tree", c.Needle("main"));
    REQUIRE(HttpPost(s.base_url, "/api/models/unload/tree", "").status == 200);
    ExpectGone(s, "tree", c.Needle("main"), "an unload");

    StartTree(s, "tree-ttl", c.Needle("ttl"));
    ExpectGone(s, "tree-ttl", c.Needle("ttl"), "its ttl");

    StartTree(s, "tree", c.Needle("main"));
    REQUIRE(RewriteConfig(s, CaseYaml(c, c.Needle("main2"))));  // "tree" changed: it stops
    REQUIRE(HttpPost(s.base_url, "/api/config/reload", "").status == 200);
    ExpectGone(s, "tree", c.Needle("main"), "a reload");
  }
  {  // shutdown
    auto swapd = StartCase(c, yaml);
    REQUIRE(swapd.ok());
    StartTree(swapd.value(), "tree", c.Needle("main"));
    REQUIRE(swapd.value().process->Signal(SIGTERM));
    REQUIRE(swapd.value().process->WaitForExit(60s));
    ExpectGone(swapd.value(), "tree", c.Needle("main"), "a shutdown");
  }
  {  // kill -9 of swapd: its guardian ends the tree
    auto swapd = StartCase(c, yaml);
    REQUIRE(swapd.ok());
    StartTree(swapd.value(), "tree", c.Needle("main"));
    swapd.value().process->Kill();
    ExpectGone(swapd.value(), "tree", c.Needle("main"), "kill -9 of swapd");
  }
  {  // kill -9 of swapd and its guardian: the next swapd of this config stops what is left
    auto swapd = StartCase(c, yaml);
    REQUIRE(swapd.ok());
    const int server = StartTree(swapd.value(), "tree", c.Needle("main"));
    const int guardian = GuardianOf(swapd.value().process->pid());
    REQUIRE(guardian > 0);
    REQUIRE(::kill(guardian, SIGKILL) == 0);
    swapd.value().process->Kill();
    REQUIRE(WaitFor([&] { return !GuardianOf(swapd.value().process->pid()); }, 10s));
    CHECK_FALSE(PidsWithArg(c.Needle("main")).empty());  // the leftover
    const std::string config = swapd.value().config_path;
    auto next = StartSwapd(yaml, {"--containment", c.mode, "--config", config});
    REQUIRE(next.ok());
    INFO(next.value().process->Output());
    CHECK(next.value().process->WaitForLineMatching(
        [&](std::string_view line) {
          return line.find("process " + std::to_string(server)) != line.npos &&
                 line.find("left by an earlier swapd") != line.npos;
        },
        20s));
    ExpectGone(swapd.value(), "tree", c.Needle("main"), "the next swapd's start");
    // And the group the first swapd made for its runs is removed.
    const std::string old_group = "swapd-" + std::to_string(swapd.value().process->pid()) + ".";
    CHECK(WaitFor([&] { return !HasGroupNamed(old_group); }, 10s));
  }
}

TEST_CASE("containment in a delegated cgroup, as systemd's Delegate=yes gives one",
          "[integration][containment]") {
  auto own = cgroup::OwnDirectory();
  const std::string delegated =
      own.ok() ? own.value() + "/swapd-test-delegated-" + std::to_string(::getpid()) : "";
  if (delegated.empty() || ::mkdir(delegated.c_str(), 0755) != 0) {
    // No cgroup this test may make: swapd cannot either, and says it uses markers.
    auto swapd = StartSwapd("models: {}\n", {"--containment", "auto"});
    REQUIRE(swapd.ok());
    CHECK(swapd.value().process->WaitForLineMatching(
        [](std::string_view line) {
          return line.find("containment of backend process trees: markers") != line.npos;
        },
        10s));
    return;
  }
  const Case c{"auto", "setsid"};
  {
    // swapd runs inside `delegated` (as a unit's main process does) and makes its groups below it.
    auto swapd = StartSwapd(
        CaseYaml(c, c.Needle("delegated")), {}, {}, 20s,
        {"/bin/sh", "-c", "echo $$ > " + delegated + "/cgroup.procs && exec \"$@\"", "sh"});
    REQUIRE(swapd.ok());
    const SwapdInstance& s = swapd.value();
    INFO(s.process->Output());
    CHECK(s.process->WaitForLineMatching(
        [&](std::string_view line) {
          return line.find("cgroup v2 (" + delegated + "/swapd-") != line.npos;
        },
        10s));
    const int server = StartTree(s, "tree", c.Needle("delegated"));
    CHECK_THAT(
        proc::ReadText("/proc/" + std::to_string(server) + "/cgroup"),
        Catch::Contains(delegated.substr(delegated.find("/swapd-test-delegated-")) + "/swapd-"));
    s.process->Kill();
    ExpectGone(s, "tree", c.Needle("delegated"), "kill -9 of swapd");
  }
  // The guardian removed swapd's groups; once it has exited too, the delegated group is empty.
  CHECK(WaitFor([&] { return ::rmdir(delegated.c_str()) == 0; }, 20s));
}

}  // namespace
}  // namespace swapd::testing
