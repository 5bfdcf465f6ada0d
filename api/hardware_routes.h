// llama-swap's machine pages: GET /api/hardware, its HardwareSnapshot (schema 1) filled with what
// swapd knows when asked: the CPUs, the RAM (plus swapd's `available_bytes`), the OS, and the GPUs
// of the memory meters (nvidia-smi or rocm-smi: index, vendor, memory, plus swapd's `used_bytes`;
// their model and driver are not read, so null). GET /api/performance: swapd keeps no series of
// CPU, RAM and GPU samples, so it answers as llama-swap with performance off: 503
// {"enabled": false}, and the UI hides the page. The handlers run on the front door's threads;
// `memory` must outlive `door`'s serving.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "frontdoor/front_door.h"
#include "memory/footprint_monitor.h"
#include "memory/machine_info.h"

namespace swapd {

// The snapshot of `machine` and of the GPUs in `view`, captured at `unix_seconds`. Pure.
nlohmann::json HardwareJson(const MachineInfo& machine, const MemoryView& view,
                            int64_t unix_seconds);

void AddHardwareRoutes(FrontDoor& door, const FootprintMonitor& memory);

}  // namespace swapd
