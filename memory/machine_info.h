// What the machine is, for GET /api/hardware: its CPUs (/proc/cpuinfo), RAM (/proc/meminfo),
// operating system (/etc/os-release, uname) and whether swapd runs in a container. The parsers
// are pure; ReadMachineInfo reads the files at each call. Thread safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace swapd {

struct CpuInfo {
  std::string vendor;  // vendor_id of the first processor, e.g. "GenuineIntel"; "" when unknown
  std::string model;   // its "model name"; "" when unknown (many ARM kernels say none)
  int sockets = 0;     // distinct "physical id"s; 0 when unknown
  int cores = 0;       // distinct ("physical id", "core id") pairs; 0 when unknown
  int threads = 0;     // "processor" entries
};
CpuInfo ParseCpuInfo(std::string_view text);

struct RamInfo {
  uint64_t total = 0;       // MemTotal, bytes
  uint64_t available = 0;   // MemAvailable, bytes
  uint64_t free = 0;        // MemFree, bytes
  uint64_t swap_total = 0;  // SwapTotal, bytes
  uint64_t swap_free = 0;   // SwapFree, bytes
};
RamInfo ParseMemInfo(std::string_view text);

// The value of `key` in an os-release file (KEY=value, quotes removed); "" when absent.
std::string OsReleaseValue(std::string_view text, std::string_view key);

struct MachineInfo {
  CpuInfo cpu;
  RamInfo ram;
  std::string arch;        // uname's machine, e.g. "x86_64", "aarch64"
  std::string kernel;      // uname's release
  std::string os_id;       // os-release ID, e.g. "debian"
  std::string os_version;  // os-release VERSION_ID
  std::string container;   // "Docker" (/.dockerenv), "Podman" (/run/.containerenv) or ""
};
MachineInfo ReadMachineInfo();

}  // namespace swapd
