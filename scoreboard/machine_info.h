// What machine a benchmark ran on, in one line stored beside its results: host name, CPU model and
// core count, RAM, GPUs (from /proc/driver/nvidia/gpus and /sys/class/drm when present), kernel.
// Reads `proc_root`/`sys_root` ("/proc", "/sys"; tests give directories laid out like them).
// Thread safe.
#pragma once

#include <string>

namespace swapd {

// "host: ryzen (AMD Ryzen 9 7950X, 32 cores), 64 GiB RAM, GPU: NVIDIA GeForce RTX 4090,
// Linux 6.1.0"; several GPUs are joined by " + "; what cannot be found is left out.
std::string MachineDescription(const std::string& proc_root = "/proc",
                               const std::string& sys_root = "/sys");

}  // namespace swapd
