#include "backends/proc_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace swapd::proc {
namespace {

// Field `n` (3 or more) of a /proc/PID/stat line; the command name (field 2) may hold spaces and
// parentheses, so fields are counted from its last ')'.
std::optional<std::string> StatField(const std::string& line, int n) {
  size_t close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close + 1));
  std::string field;
  for (int i = 3; i <= n; ++i) {
    if (!(fields >> field)) return std::nullopt;
  }
  return field;
}

}  // namespace

std::string ReadText(const std::string& path) {
  std::string text;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

std::optional<std::string> EnvValueIn(const std::string& environ, const std::string& name) {
  const std::string key = name + "=";
  std::optional<std::string> value;
  size_t at = 0;
  while (at < environ.size()) {
    size_t end = environ.find('\0', at);
    if (end == std::string::npos) end = environ.size();
    if (environ.compare(at, key.size(), key) == 0) {
      value = environ.substr(at + key.size(), end - at - key.size());  // the last one wins
    }
    at = end + 1;
  }
  return value;
}

std::optional<std::string> EnvValue(int pid, const std::string& name) {
  return EnvValueIn(ReadText("/proc/" + std::to_string(pid) + "/environ"), name);
}

std::vector<int> PidsWithEnv(const std::string& name, const std::string& value, bool prefix_match) {
  std::vector<int> pids;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return pids;
  const std::string needle = name + "=" + value;
  while (struct dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    // A zombie's environ reads empty, so a process that has exited is not counted.
    const std::string environ = ReadText("/proc/" + std::string(entry->d_name) + "/environ");
    if (environ.find(needle) == std::string::npos) continue;  // quick reject before parsing
    std::optional<std::string> found = EnvValueIn(environ, name);
    if (found && (prefix_match ? found->compare(0, value.size(), value) == 0 : *found == value)) {
      pids.push_back(static_cast<int>(pid));
    }
  }
  ::closedir(dir);
  std::sort(pids.begin(), pids.end());
  return pids;
}

std::optional<uint64_t> StartTime(int pid) {
  const std::string stat = ReadText("/proc/" + std::to_string(pid) + "/stat");
  std::optional<std::string> state = StatField(stat, 3);
  if (!state || *state == "Z" || *state == "X") return std::nullopt;
  std::optional<std::string> field = StatField(stat, 22);
  if (!field) return std::nullopt;
  return std::strtoull(field->c_str(), nullptr, 10);
}

}  // namespace swapd::proc
