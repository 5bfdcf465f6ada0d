#include "memory/machine_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "base/text.h"

namespace swapd {
namespace {

std::string ReadMachineFile(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Calls `each(key, value)` for the "key : value" lines of /proc/cpuinfo (both trimmed); an empty
// line ends a processor's block (`each("", "")`).
template <typename Each>
void ForEachCpuInfoLine(std::string_view text, Each each) {
  ForEachLine(text, [&each](std::string_view line) {
    const size_t colon = line.find(':');
    if (TrimSpace(line).empty()) {
      each(std::string_view(), std::string_view());
    } else if (colon != std::string_view::npos) {
      each(TrimSpace(line.substr(0, colon)), TrimSpace(line.substr(colon + 1)));
    }
  });
  each(std::string_view(), std::string_view());
}

}  // namespace

CpuInfo ParseCpuInfo(std::string_view text) {
  CpuInfo cpu;
  std::set<std::string> sockets;
  std::set<std::pair<std::string, std::string>> cores;
  std::string socket;
  std::string core;
  ForEachCpuInfoLine(text, [&](std::string_view key, std::string_view value) {
    if (key.empty()) {  // the end of a processor's block
      if (!core.empty()) cores.emplace(socket, core);
      socket.clear();
      core.clear();
    } else if (key == "processor") {
      ++cpu.threads;
    } else if (key == "vendor_id" && cpu.vendor.empty()) {
      cpu.vendor = std::string(value);
    } else if (key == "model name" && cpu.model.empty()) {
      cpu.model = std::string(value);
    } else if (key == "physical id") {
      socket = std::string(value);
      sockets.insert(socket);
    } else if (key == "core id") {
      core = std::string(value);
    }
  });
  cpu.sockets = static_cast<int>(sockets.size());
  cpu.cores = static_cast<int>(cores.size());
  return cpu;
}

RamInfo ParseMemInfo(std::string_view text) {
  RamInfo ram;
  std::istringstream in{std::string(text)};
  std::string key;
  uint64_t kb = 0;
  while (in >> key >> kb) {
    if (key == "MemTotal:") ram.total = kb * 1024;
    if (key == "MemAvailable:") ram.available = kb * 1024;
    if (key == "MemFree:") ram.free = kb * 1024;
    if (key == "SwapTotal:") ram.swap_total = kb * 1024;
    if (key == "SwapFree:") ram.swap_free = kb * 1024;
    in.ignore(256, '\n');
  }
  return ram;
}

std::string OsReleaseValue(std::string_view text, std::string_view key) {
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos || TrimSpace(line.substr(0, eq)) != key) continue;
    std::string_view value = TrimSpace(line.substr(eq + 1));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    return std::string(value);
  }
  return "";
}

MachineInfo ReadMachineInfo() {
  MachineInfo machine;
  machine.cpu = ParseCpuInfo(ReadMachineFile("/proc/cpuinfo"));
  if (machine.cpu.threads == 0) {
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    machine.cpu.threads = online > 0 ? static_cast<int>(online) : 0;
  }
  machine.ram = ParseMemInfo(ReadMachineFile("/proc/meminfo"));
  struct utsname names {};
  if (uname(&names) == 0) {
    machine.arch = names.machine;
    machine.kernel = names.release;
  }
  std::string os_release = ReadMachineFile("/etc/os-release");
  if (os_release.empty()) os_release = ReadMachineFile("/usr/lib/os-release");
  machine.os_id = OsReleaseValue(os_release, "ID");
  machine.os_version = OsReleaseValue(os_release, "VERSION_ID");
  if (access("/.dockerenv", F_OK) == 0) {
    machine.container = "Docker";
  } else if (access("/run/.containerenv", F_OK) == 0) {
    machine.container = "Podman";
  }
  return machine;
}

}  // namespace swapd
