#include "backends/leftovers.h"

#include <dirent.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "backends/cgroup.h"
#include "backends/containment.h"
#include "backends/proc_scan.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kLeftoverPollEvery = std::chrono::milliseconds(20);
constexpr auto kLeftoverKillLimit = std::chrono::seconds(5);

// "PID.START." or "PID.START.SEQ" -> pid and start time; false when malformed.
bool ParseOwner(const std::string& marker, int* pid, uint64_t* start) {
  char* end = nullptr;
  long p = std::strtol(marker.c_str(), &end, 10);
  if (p <= 0 || *end != '.') return false;
  *pid = static_cast<int>(p);
  *start = std::strtoull(end + 1, &end, 10);
  return *end == '.' || *end == '\0';
}

// True when the swapd named by the marker still runs (the same process: pid and start time).
bool OwnerAlive(int pid, uint64_t start) { return proc::StartTime(pid) == start; }

std::string CommandLine(int pid) {
  std::string cmd = proc::ReadText("/proc/" + std::to_string(pid) + "/cmdline");
  if (!cmd.empty() && cmd.back() == '\0') cmd.pop_back();
  std::replace(cmd.begin(), cmd.end(), '\0', ' ');
  if (cmd.size() > 200) cmd = cmd.substr(0, 200) + "...";
  return cmd;
}

bool Gone(int pid) {
  // A zombie's environ is empty: it has exited, whoever reaps it.
  return proc::EnvValue(pid, kRunEnv) == std::nullopt;
}

// Removes the groups of gone swapds next to this swapd's own group of runs, where empty. A group
// whose processes were just stopped may still read populated for a moment after they exited:
// `settle` is how long to wait for that, in all.
void RemoveStaleGroups(std::chrono::milliseconds settle) {
  const auto settled = Clock::now() + settle;
  const std::string own = containment::InstanceCgroup();
  if (own.empty()) return;
  const std::string parent = own.substr(0, own.rfind('/'));
  DIR* dir = ::opendir(parent.c_str());
  if (dir == nullptr) return;
  std::vector<std::string> stale;
  while (struct dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    int pid = 0;
    uint64_t start = 0;
    if (name.rfind("swapd-", 0) != 0 || parent + "/" + name == own) continue;
    if (!ParseOwner(name.substr(6), &pid, &start) || OwnerAlive(pid, start)) continue;
    stale.push_back(parent + "/" + name);
  }
  ::closedir(dir);
  for (const std::string& group : stale) {
    while (cgroup::Populated(group) && Clock::now() < settled) {
      std::this_thread::sleep_for(kLeftoverPollEvery);
    }
    if (cgroup::Populated(group)) {
      spdlog::warn(
          "cgroup {} of a swapd that is gone still holds processes (not marked as this "
          "config's): left alone",
          group);
      continue;
    }
    if (DIR* runs = ::opendir(group.c_str())) {
      while (struct dirent* entry = ::readdir(runs)) {
        if (entry->d_type == DT_DIR && entry->d_name[0] != '.') {
          ::rmdir((group + "/" + entry->d_name).c_str());
        }
      }
      ::closedir(runs);
    }
    if (::rmdir(group.c_str()) == 0) {
      spdlog::info("removed the empty cgroup {} of a swapd that is gone", group);
    }
  }
}

}  // namespace

std::vector<Leftover> FindLeftovers() {
  std::vector<Leftover> found;
  const std::string mine = containment::InstanceMarker();
  for (int pid : proc::PidsWithEnv(kRunEnv, "", /*prefix_match=*/true)) {
    const std::string environ = proc::ReadText("/proc/" + std::to_string(pid) + "/environ");
    const std::string marker = proc::EnvValueIn(environ, kRunEnv).value_or("");
    int owner = 0;
    uint64_t start = 0;
    if (marker.rfind(mine, 0) == 0 || !ParseOwner(marker, &owner, &start)) continue;
    if (OwnerAlive(owner, start)) continue;  // another swapd's, running
    Leftover l;
    l.pid = pid;
    l.owner_pid = owner;
    l.model = proc::EnvValueIn(environ, kModelEnv).value_or("");
    l.config = proc::EnvValueIn(environ, kConfigEnv).value_or("");
    l.command = CommandLine(pid);
    found.push_back(std::move(l));
  }
  return found;
}

int StopLeftovers(const std::string& config_path, std::chrono::milliseconds grace) {
  std::vector<Leftover> ours;
  for (Leftover& l : FindLeftovers()) {
    if (!config_path.empty() && l.config == config_path) {
      ours.push_back(std::move(l));
    } else {
      spdlog::warn(
          "process {} (model \"{}\", {}) was left by swapd pid {} of {}: not this "
          "config's, left alone",
          l.pid, l.model, l.command, l.owner_pid, l.config.empty() ? "no config file" : l.config);
    }
  }
  if (!ours.empty()) {
    const auto begin = Clock::now();
    for (const Leftover& l : ours) ::kill(l.pid, SIGTERM);
    auto all_gone = [&] {
      return std::all_of(ours.begin(), ours.end(), [](const Leftover& l) { return Gone(l.pid); });
    };
    while (!all_gone() && Clock::now() < begin + grace)
      std::this_thread::sleep_for(kLeftoverPollEvery);
    std::vector<int> killed;
    for (const Leftover& l : ours) {
      if (!Gone(l.pid) && ::kill(l.pid, SIGKILL) == 0) killed.push_back(l.pid);
    }
    const auto kill_begin = Clock::now();
    while (!all_gone() && Clock::now() < kill_begin + kLeftoverKillLimit) {
      std::this_thread::sleep_for(kLeftoverPollEvery);
    }
    for (const Leftover& l : ours) {
      const bool by_kill = std::find(killed.begin(), killed.end(), l.pid) != killed.end();
      const std::string how = !Gone(l.pid) ? "still running after SIGKILL"
                              : by_kill    ? "killed (SIGKILL after SIGTERM was ignored)"
                                           : "stopped (SIGTERM)";
      spdlog::warn(
          "process {} (model \"{}\", {}) was left by an earlier swapd (pid {}) of this "
          "config: {}",
          l.pid, l.model, l.command, l.owner_pid, how);
    }
  }
  RemoveStaleGroups(ours.empty() ? std::chrono::milliseconds(0) : std::chrono::seconds(2));
  return static_cast<int>(ours.size());
}

}  // namespace swapd
