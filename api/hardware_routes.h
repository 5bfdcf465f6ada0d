// llama-swap's machine pages: GET /api/hardware, its HardwareSnapshot (schema 1) filled with what
// swapd knows when asked: the CPUs, the RAM (plus swapd's `available_bytes`), the OS, and the GPUs
// of the memory meters (nvidia-smi or rocm-smi: index, vendor, memory, plus swapd's `used_bytes`;
// their model and driver are not read, so null). GET /api/performance: the SystemSampler's last
// hour of samples as llama-swap answers them, {"enabled": true, "sys_stats": [...], "gpu_stats":
// [...]}, `?after=` (RFC 3339) keeping those taken strictly after it (a malformed one is a 400);
// with `performance.disabled`, 503 {"enabled": false}, and llama-swap's UI hides its Performance
// page. The handlers run on the front door's threads; `memory` and `sampler` must outlive
// `door`'s serving.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "frontdoor/front_door.h"
#include "memory/footprint_monitor.h"
#include "memory/machine_info.h"
#include "memory/system_sampler.h"

namespace swapd {

// The snapshot of `machine` and of the GPUs in `view`, captured at `unix_seconds`. Pure.
nlohmann::json HardwareJson(const MachineInfo& machine, const MemoryView& view,
                            int64_t unix_seconds);

// GET /api/performance's body of `samples`: llama-swap's SysStat and GpuStat fields. Pure.
nlohmann::json PerformanceJson(const PerformanceSamples& samples);

void AddHardwareRoutes(FrontDoor& door, const FootprintMonitor& memory,
                       const SystemSampler& sampler);

}  // namespace swapd
