#include "api/hardware_routes.h"

#include <utility>

#include "base/json_text.h"
#include "base/time_text.h"
#include "base/unix_time.h"

namespace swapd {
namespace {

using nlohmann::json;

json TextOrNull(const std::string& text) { return text.empty() ? json(nullptr) : json(text); }

json CountOrNull(int count) { return count > 0 ? json(count) : json(nullptr); }

// llama-swap's architecture names; the machine's own as raw_name when it differs.
json ArchitectureJson(const std::string& machine) {
  std::string name = "other";
  if (machine == "x86_64" || machine == "ppc64le" || machine == "riscv64" || machine == "s390x") {
    name = machine;
  } else if (machine == "aarch64" || machine == "arm64") {
    name = "arm64";
  } else if (machine.starts_with("armv7")) {
    name = "armv7";
  }
  return {{"name", name}, {"raw_name", name == machine ? json(nullptr) : json(machine)}};
}

json CpuJson(const CpuInfo& cpu) {
  const bool cores_known = cpu.cores > 0 && (cpu.threads == 0 || cpu.cores <= cpu.threads);
  return {{"vendor", TextOrNull(cpu.vendor)},
          {"model", TextOrNull(cpu.model)},
          {"socket_count", CountOrNull(cpu.sockets)},
          {"physical_core_count", cores_known ? json(cpu.cores) : json(nullptr)},
          {"logical_thread_count", CountOrNull(cpu.threads)}};
}

json AcceleratorsJson(const MemoryView& view) {
  json list = json::array();
  const bool amd = view.gpu_tool.find("rocm-smi") != std::string::npos;
  for (const auto& [index, gpu] : view.gpus) {
    json memory = {{"kind", "dedicated"},
                   {"capacity_bytes", gpu.total_bytes > 0 ? json(gpu.total_bytes) : json(nullptr)}};
    if (gpu.used_bytes >= 0) memory["used_bytes"] = gpu.used_bytes;
    list.push_back({{"index", list.size()},
                    {"kind", "gpu"},
                    {"vendor", amd ? "AMD" : "NVIDIA"},
                    {"model", nullptr},
                    {"architecture", nullptr},
                    {"memory", std::move(memory)},
                    {"driver", nullptr},
                    {"power_limit_watts", nullptr}});
  }
  return list;
}

}  // namespace

json HardwareJson(const MachineInfo& machine, const MemoryView& view, int64_t unix_seconds) {
  json environment = {{"kind", machine.container.empty() ? "unknown" : "container"},
                      {"name", TextOrNull(machine.container)},
                      {"version", nullptr}};
  json memory = {{"capacity_bytes", machine.ram.total}};
  if (machine.ram.available > 0) memory["available_bytes"] = machine.ram.available;
  return {{"schema_version", 1},
          {"captured_at", Rfc3339(unix_seconds)},
          {"capture",
           {{"scope", "inference_host"},
            {"method", "detected"},
            {"detector", {{"name", "swapd"}, {"version", SWAPD_VERSION}}}}},
          {"architecture", ArchitectureJson(machine.arch)},
          {"operating_system",
           {{"family", "linux"},
            {"name", TextOrNull(machine.os_id)},
            {"version", TextOrNull(machine.os_version)},
            {"kernel", TextOrNull(machine.kernel)}}},
          {"environment", std::move(environment)},
          {"cpu", CpuJson(machine.cpu)},
          {"memory", std::move(memory)},
          {"accelerators", AcceleratorsJson(view)}};
}

void AddHardwareRoutes(FrontDoor& door, const FootprintMonitor& memory) {
  door.AddRoute("GET", "/api/hardware",
                [&memory](const HttpRequest&, HttpResponse& res, RequestContext&) {
                  res.SetBody(JsonText(HardwareJson(ReadMachineInfo(), memory.View(), UnixNow())),
                              "application/json");
                });
  door.AddRoute("GET", "/api/performance",
                [](const HttpRequest&, HttpResponse& res, RequestContext&) {
                  res.SetBody(R"({"enabled":false})", "application/json");
                  res.status = 503;
                });
}

}  // namespace swapd
