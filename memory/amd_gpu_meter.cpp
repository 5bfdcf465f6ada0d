// AMD GPUs through rocm-smi: device memory from `--showmeminfo vram --json`, each process's VRAM
// from the `--showpids` table, and which GPUs a process uses from `--showpidgpus` (asked only on a
// machine with more than one GPU). rocm-smi reports one VRAM figure per process, not per GPU: a
// process on several GPUs is unknown on each (kUnknownBytes), never guessed.
#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/parse_int.h"
#include "memory/memory_meter.h"
#include "memory/tool_run.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// A byte figure given as a JSON string ("17163091968") or number; kUnknownBytes otherwise.
int64_t BytesOf(const nlohmann::json& value) {
  int64_t bytes = 0;
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_string() && ParseInt64(value.get_ref<const std::string&>(), &bytes)) return bytes;
  return kUnknownBytes;
}

}  // namespace

std::map<int, GpuDevice> ParseRocmMemInfo(std::string_view json_text) {
  std::map<int, GpuDevice> devices;
  const nlohmann::json doc = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return devices;
  for (const auto& [key, card] : doc.items()) {
    int64_t index = 0;
    if (key.rfind("card", 0) != 0 || !ParseInt64(std::string_view(key).substr(4), &index) ||
        !card.is_object()) {
      continue;
    }
    GpuDevice device;
    device.uuid = key;
    device.total_bytes = BytesOf(card.value("VRAM Total Memory (B)", nlohmann::json()));
    device.used_bytes = BytesOf(card.value("VRAM Total Used Memory (B)", nlohmann::json()));
    devices[static_cast<int>(index)] = device;
  }
  return devices;
}

std::map<int, RocmProcess> ParseRocmPids(std::string_view text) {
  std::map<int, RocmProcess> processes;
  std::istringstream in{std::string(text)};
  bool table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find("KFD process information") != std::string::npos) {
      table = true;
      continue;
    }
    if (!table) continue;
    // PID, PROCESS NAME (may hold spaces), GPU(s), VRAM USED, SDMA USED, CU OCCUPANCY.
    const std::vector<std::string> w = Words(line);
    int64_t pid = 0, gpus = 0, vram = 0;
    if (w.size() < 6 || !ParseInt64(w[0], &pid) || pid <= 0) continue;
    RocmProcess p;
    p.gpus = ParseInt64(w[w.size() - 4], &gpus) ? static_cast<int>(gpus) : 0;
    p.vram_bytes = ParseInt64(w[w.size() - 3], &vram) && vram >= 0 ? vram : kUnknownBytes;
    processes[static_cast<int>(pid)] = p;
  }
  return processes;
}

std::map<int, std::vector<int>> ParseRocmPidGpus(std::string_view text) {
  std::map<int, std::vector<int>> by_pid;
  std::istringstream in{std::string(text)};
  int pid = 0;  // the pid whose device list the next line holds
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> w = Words(line);
    int64_t number = 0;
    if (w.size() >= 4 && w[0] == "PID" && ParseInt64(w[1], &number) && w[2] == "is") {
      pid = static_cast<int>(number);
      by_pid[pid];
      continue;
    }
    if (pid == 0 || w.empty()) continue;
    std::vector<int> gpus;
    for (const std::string& word : w) {
      if (!ParseInt64(word, &number)) {
        gpus.clear();
        break;
      }
      gpus.push_back(static_cast<int>(number));
    }
    if (!gpus.empty()) by_pid[pid] = std::move(gpus);
    pid = 0;
  }
  return by_pid;
}

std::map<int, std::map<int, int64_t>> RocmMemoryByPid(
    const std::map<int, GpuDevice>& devices, const std::map<int, RocmProcess>& processes,
    const std::map<int, std::vector<int>>& gpus_of_pid) {
  std::map<int, std::map<int, int64_t>> by_pid;
  for (const auto& [pid, p] : processes) {
    if (p.vram_bytes == 0 && p.gpus == 0) continue;  // a KFD client holding nothing
    std::vector<int> gpus;
    if (devices.size() == 1) {
      gpus.push_back(devices.begin()->first);
    } else if (auto found = gpus_of_pid.find(pid); found != gpus_of_pid.end()) {
      gpus = found->second;
    }
    for (int gpu : gpus) by_pid[pid][gpu] = gpus.size() == 1 ? p.vram_bytes : kUnknownBytes;
  }
  return by_pid;
}

GpuReading ReadAmdGpus(std::chrono::milliseconds timeout) {
  GpuReading reading;
  reading.tool = FindOnPath("rocm-smi");
  if (reading.tool.empty()) return reading;
  const Clock::time_point start = Clock::now();
  auto left = [&] {
    return std::max(
        std::chrono::milliseconds(1),
        timeout - std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start));
  };
  ToolRun meminfo = RunTool(reading.tool, {"--showmeminfo", "vram", "--json"}, timeout);
  if (!meminfo.failure.empty()) {
    reading.error = meminfo.failure;
    return reading;
  }
  reading.devices = ParseRocmMemInfo(meminfo.out);
  if (reading.devices.empty()) {
    reading.error = "rocm-smi: --showmeminfo vram --json listed no card";
    return reading;
  }
  ToolRun pids = RunTool(reading.tool, {"--showpids"}, left());
  if (!pids.failure.empty()) {
    reading.error = pids.failure;
    return reading;
  }
  std::map<int, std::vector<int>> gpus_of_pid;
  if (reading.devices.size() > 1) {
    ToolRun pid_gpus = RunTool(reading.tool, {"--showpidgpus"}, left());
    if (!pid_gpus.failure.empty()) {
      reading.error = pid_gpus.failure;
      return reading;
    }
    gpus_of_pid = ParseRocmPidGpus(pid_gpus.out);
  }
  reading.by_pid = RocmMemoryByPid(reading.devices, ParseRocmPids(pids.out), gpus_of_pid);
  reading.available = true;
  return reading;
}

GpuReading ReadGpus(std::chrono::milliseconds timeout) {
  GpuReading nvidia = ReadNvidiaGpus(timeout);
  if (!nvidia.tool.empty()) return nvidia;
  return ReadAmdGpus(timeout);
}

}  // namespace swapd
