// Looking at processes through /proc, for tests: a /proc file's text, a process's state, parent
// and group, the zombie children of the test process.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace swapd::testing {

// A /proc file's text; empty when it cannot be read. read(2), not std::ifstream: a process that
// exits while it is read makes the read fail (ESRCH), which std::filebuf throws as an exception;
// here it is simply gone.
inline std::string ReadProcFile(const std::string& path) {
  std::string text;
  if (int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
    char buf[4096];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
    close(fd);
  }
  return text;
}

struct ProcStat {
  int pid = 0;
  char state = '?';
  int ppid = 0;
  int pgrp = 0;
};

// Fields of /proc/<pid>/stat; pid 0 when the process does not exist.
inline ProcStat ReadProcStat(int pid) {
  const std::string text = ReadProcFile("/proc/" + std::to_string(pid) + "/stat");
  ProcStat st;
  // The fields follow the command name, which is in parentheses and may hold any character.
  size_t close = text.rfind(')');
  if (close == std::string::npos) return st;
  std::istringstream rest(text.substr(close + 1));
  st.pid = pid;
  rest >> st.state >> st.ppid >> st.pgrp;
  return st;
}

inline std::vector<ProcStat> AllProcesses() {
  std::vector<ProcStat> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    ProcStat st = ReadProcStat(std::stoi(name));
    if (st.pid != 0) out.push_back(st);
  }
  return out;
}

// Zombie children of this test process.
inline std::vector<int> ZombieChildren() {
  std::vector<int> out;
  const int self = ::getpid();
  for (const ProcStat& st : AllProcesses()) {
    if (st.ppid == self && st.state == 'Z') out.push_back(st.pid);
  }
  return out;
}

}  // namespace swapd::testing
