#include "memory/process_memory.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>
#include <string>

#include "backends/proc_scan.h"

namespace swapd {
namespace {

struct GroupMember {
  int pid = 0;
  long rss_pages = 0;
};

// From /proc/<pid>/stat: the process group and the resident pages. The command name (field 2)
// may hold spaces and parentheses, so the fields are counted from its last ')'.
bool ReadStat(const std::string& pid, long* pgrp, long* rss_pages) {
  const std::string line = proc::ReadText("/proc/" + pid + "/stat");
  size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(line.substr(close + 1));
  std::string field;
  // After the name: state(3) ppid(4) pgrp(5) ... rss(24).
  for (int i = 3; i <= 24; ++i) {
    if (!(fields >> field)) return false;
    if (i == 5) *pgrp = std::stol(field);
    if (i == 24) *rss_pages = std::stol(field);
  }
  return true;
}

// Every process of the groups `pgids`, by group, ascending by pid; one walk of /proc. Processes
// that exit during the walk are skipped.
std::map<int, std::vector<GroupMember>> GroupsMembers(const std::vector<int>& pgids) {
  std::map<int, std::vector<GroupMember>> members;
  for (int pgid : pgids) {
    if (pgid > 0) members[pgid];
  }
  if (members.empty()) return members;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return members;
  while (dirent* entry = readdir(dir)) {
    if (!std::isdigit(static_cast<unsigned char>(entry->d_name[0]))) continue;
    long pgrp = 0, rss = 0;
    try {
      if (!ReadStat(entry->d_name, &pgrp, &rss)) continue;
      auto group = members.find(static_cast<int>(pgrp));
      if (group == members.end()) continue;
      GroupMember member;
      member.pid = std::stoi(entry->d_name);
      member.rss_pages = rss;
      group->second.push_back(member);
    } catch (const std::exception&) {
      // A malformed field (cannot happen with a sane kernel): skip that process.
    }
  }
  closedir(dir);
  for (auto& [pgid, list] : members) {
    std::sort(list.begin(), list.end(),
              [](const GroupMember& a, const GroupMember& b) { return a.pid < b.pid; });
  }
  return members;
}

std::vector<GroupMember> GroupMembers(int pgid) {
  auto members = GroupsMembers({pgid});
  return members.empty() ? std::vector<GroupMember>{} : std::move(members.begin()->second);
}

}  // namespace

std::map<int, std::vector<int>> ProcessGroupsPids(const std::vector<int>& pgids) {
  std::map<int, std::vector<int>> out;
  for (auto& [pgid, list] : GroupsMembers(pgids)) {
    std::vector<int>& pids = out[pgid];
    for (const GroupMember& member : list) pids.push_back(member.pid);
  }
  return out;
}

std::vector<int> ProcessGroupPids(int pgid) {
  std::vector<int> pids;
  for (const GroupMember& member : GroupMembers(pgid)) pids.push_back(member.pid);
  return pids;
}

int64_t ProcessGroupResidentBytes(int pgid) {
  int64_t pages = 0;
  for (const GroupMember& member : GroupMembers(pgid)) pages += member.rss_pages;
  return pages * sysconf(_SC_PAGESIZE);
}

std::vector<int> BackendPids(const BackendInfo& backend) {
  if (backend.pid <= 0) return {};
  std::vector<int> pids = ProcessGroupPids(backend.pid);  // the backend leads its own group
  if (backend.scope) {
    for (int pid : ScopePids(*backend.scope)) pids.push_back(pid);
    std::sort(pids.begin(), pids.end());
    pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  }
  return pids;
}

int64_t ResidentBytesOf(const std::vector<int>& pids) {
  int64_t pages = 0;
  for (int pid : pids) {
    long pgrp = 0, rss = 0;
    try {
      if (ReadStat(std::to_string(pid), &pgrp, &rss)) pages += rss;
    } catch (const std::exception&) {
      // A malformed field (cannot happen with a sane kernel): count nothing for it.
    }
  }
  return pages * sysconf(_SC_PAGESIZE);
}

int64_t SelfResidentBytes() {
  std::istringstream statm(proc::ReadText("/proc/self/statm"));
  long pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return static_cast<int64_t>(pages_resident) * sysconf(_SC_PAGESIZE);
}

int SelfOpenDescriptors() {
  int n = 0;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (readdir(dir)) ++n;
    closedir(dir);
    n -= 3;  // ".", ".." and the directory's own descriptor
  }
  return n;
}

}  // namespace swapd
