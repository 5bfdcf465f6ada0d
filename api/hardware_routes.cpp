#include "api/hardware_routes.h"

#include <utility>

#include "base/json_text.h"
#include "base/time_text.h"
#include "base/unix_time.h"
#include "frontdoor/error_response.h"

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

json SysStatJson(const SysStat& stat) {
  json net = json::array();
  for (const NetIo& io : stat.net_io) {
    net.push_back(
        {{"name", io.name}, {"bytes_recv", io.bytes_recv}, {"bytes_sent", io.bytes_sent}});
  }
  return {{"timestamp", Rfc3339(stat.timestamp)},
          {"cpu_util_per_core", stat.cpu_util_per_core},
          {"mem_total_mb", stat.mem_total_mb},
          {"mem_used_mb", stat.mem_used_mb},
          {"mem_free_mb", stat.mem_free_mb},
          {"swap_total_mb", stat.swap_total_mb},
          {"swap_used_mb", stat.swap_used_mb},
          {"load_avg_1", stat.load.one},
          {"load_avg_5", stat.load.five},
          {"load_avg_15", stat.load.fifteen},
          {"net_io", std::move(net)}};
}

json GpuStatJson(const GpuStat& stat) {
  return {{"timestamp", Rfc3339(stat.timestamp)},
          {"id", stat.id},
          {"name", stat.name},
          {"uuid", stat.uuid},
          {"temp_c", stat.temp_c},
          {"vram_temp_c", stat.vram_temp_c},
          {"gpu_util_pct", stat.gpu_util_pct},
          {"mem_util_pct", stat.mem_util_pct},
          {"mem_used_mb", stat.mem_used_mb},
          {"mem_total_mb", stat.mem_total_mb},
          {"fan_speed_pct", stat.fan_speed_pct},
          {"power_draw_w", stat.power_draw_w}};
}

}  // namespace

json PerformanceJson(const PerformanceSamples& samples) {
  json sys = json::array();
  for (const SysStat& stat : samples.sys) sys.push_back(SysStatJson(stat));
  json gpus = json::array();
  for (const GpuStat& stat : samples.gpus) gpus.push_back(GpuStatJson(stat));
  return {{"enabled", true}, {"sys_stats", std::move(sys)}, {"gpu_stats", std::move(gpus)}};
}

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

void AddHardwareRoutes(FrontDoor& door, const FootprintMonitor& memory,
                       const SystemSampler& sampler) {
  door.AddRoute("GET", "/api/hardware",
                [&memory](const HttpRequest&, HttpResponse& res, RequestContext&) {
                  res.SetBody(JsonText(HardwareJson(ReadMachineInfo(), memory.View(), UnixNow())),
                              "application/json");
                });
  door.AddRoute("GET", "/api/performance",
                [&sampler](const HttpRequest& req, HttpResponse& res, RequestContext&) {
                  std::optional<int64_t> after;
                  if (const auto text = req.Param("after"); text && !text->empty()) {
                    after = ParseRfc3339(*text);
                    if (!after) {
                      return SetErrorResponse(
                          res, Status::Error(ErrorCode::kInvalidArgument,
                                             "invalid 'after' timestamp, use RFC3339 format"));
                    }
                  }
                  const std::optional<PerformanceSamples> samples = sampler.Samples(after);
                  if (!samples) {
                    res.SetBody(R"({"enabled":false})", "application/json");
                    res.status = 503;
                    return;
                  }
                  res.SetBody(JsonText(PerformanceJson(*samples)), "application/json");
                });
}

}  // namespace swapd
