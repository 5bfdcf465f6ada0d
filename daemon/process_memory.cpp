#include "daemon/process_memory.h"

#include <dirent.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <string>

namespace swapd {
namespace {

// From /proc/<pid>/stat: the process group and the resident pages. The command name (field 2)
// may hold spaces and parentheses, so the fields are counted from its last ')'.
bool ReadStat(const std::string& pid, long* pgrp, long* rss_pages) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
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

}  // namespace

int64_t ProcessGroupResidentBytes(int pgid) {
  if (pgid <= 0) return 0;
  int64_t pages = 0;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return 0;
  while (dirent* entry = readdir(dir)) {
    if (!std::isdigit(static_cast<unsigned char>(entry->d_name[0]))) continue;
    long pgrp = 0, rss = 0;
    try {
      if (ReadStat(entry->d_name, &pgrp, &rss) && pgrp == pgid) pages += rss;
    } catch (const std::exception&) {
      // A malformed field (cannot happen with a sane kernel): skip that process.
    }
  }
  closedir(dir);
  return pages * sysconf(_SC_PAGESIZE);
}

int64_t SelfResidentBytes() {
  std::ifstream statm("/proc/self/statm");
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
