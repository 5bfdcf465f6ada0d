#include "backends/cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "backends/proc_scan.h"

namespace swapd::cgroup {
namespace {

// mountinfo escapes spaces, tabs, newlines and backslashes in paths as \ooo.
std::string Unescape(const std::string& field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      const std::string octal = field.substr(i + 1, 3);
      if (octal.size() == 3 &&
          std::all_of(octal.begin(), octal.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        out += static_cast<char>(std::strtol(octal.c_str(), nullptr, 8));
        i += 3;
        continue;
      }
    }
    out += field[i];
  }
  return out;
}

bool WriteText(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n;
  while ((n = ::write(fd, text.data(), text.size())) < 0 && errno == EINTR) {
  }
  ::close(fd);
  return n == static_cast<ssize_t>(text.size());
}

}  // namespace

Result<std::string> OwnDirectoryFrom(const std::string& mountinfo, const std::string& cgroup) {
  std::string own;
  bool found_own = false;
  std::istringstream groups(cgroup);
  for (std::string line; std::getline(groups, line);) {
    if (line.rfind("0::", 0) == 0) {
      own = line.substr(3);
      found_own = true;
    }
  }
  if (!found_own) {
    return Status::Error(ErrorCode::kUnavailable,
                         "this process has no cgroup v2 group (/proc/self/cgroup has no 0:: line)");
  }
  std::istringstream mounts(mountinfo);
  for (std::string line; std::getline(mounts, line);) {
    // id parent major:minor root mount-point options [optional fields] - fstype source options
    size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream tail(line.substr(dash + 3));
    std::string fstype;
    tail >> fstype;
    if (fstype != "cgroup2") continue;
    std::istringstream head(line.substr(0, dash));
    std::string id, parent, device, root, point;
    head >> id >> parent >> device >> root >> point;
    root = Unescape(root);
    point = Unescape(point);
    // The mount shows the hierarchy from `root` down; our group must lie inside it.
    if (root != "/" && own.compare(0, root.size(), root) != 0) continue;
    std::string rest = root == "/" ? own : own.substr(root.size());
    if (!rest.empty() && rest.front() != '/') continue;
    if (rest == "/") rest.clear();
    return point + rest;
  }
  return Status::Error(ErrorCode::kUnavailable,
                       "no cgroup v2 file system is mounted (a cgroup v1 machine?)");
}

Result<std::string> OwnDirectory() {
  return OwnDirectoryFrom(proc::ReadText("/proc/self/mountinfo"),
                          proc::ReadText("/proc/self/cgroup"));
}

std::vector<int> Procs(const std::string& dir) {
  std::vector<int> pids;
  std::istringstream in(proc::ReadText(dir + "/cgroup.procs"));
  for (int pid; in >> pid;) pids.push_back(pid);
  std::sort(pids.begin(), pids.end());
  return pids;
}

bool Populated(const std::string& dir) {
  const std::string events = proc::ReadText(dir + "/cgroup.events");
  return events.find("populated 1") != std::string::npos;
}

bool KillAll(const std::string& dir) {
  if (WriteText(dir + "/cgroup.kill", "1")) return true;
  // Before Linux 5.14: SIGKILL each process of the group (a leaf: runs have no sub-groups).
  // Forks racing the loop land in the group too; a few rounds catch them.
  bool any = false;
  for (int round = 0; round < 8; ++round) {
    std::vector<int> pids = Procs(dir);
    if (pids.empty()) break;
    for (int pid : pids) any |= ::kill(pid, SIGKILL) == 0;
  }
  return any || ::access((dir + "/cgroup.procs").c_str(), R_OK) == 0;
}

}  // namespace swapd::cgroup
