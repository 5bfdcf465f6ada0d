// The machine description (scoreboard/machine_info.h) from fake /proc and /sys trees, and from
// the real ones.
#include "scoreboard/machine_info.h"

#include <catch2/catch.hpp>

#include "tests/support/temp_dir.h"

namespace swapd::testing {
namespace {

TEST_CASE("the machine description names host, CPU, RAM, GPUs and kernel", "[unit][scoreboard]") {
  TempDir proc("swapd-proc");
  TempDir sys("swapd-sys");
  proc.Write("sys/kernel/hostname", "ryzen\n");
  proc.Write("sys/kernel/osrelease", "6.1.0-18-amd64\n");
  std::string cpuinfo;
  for (int i = 0; i < 4; ++i) {
    cpuinfo += "processor\t: " + std::to_string(i) +
               "\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD Ryzen 5 5600U with Radeon "
               "Graphics\nflags\t\t: fpu vme\n\n";
  }
  proc.Write("cpuinfo", cpuinfo);
  proc.Write("meminfo", "MemTotal:       16131932 kB\nMemFree:         1000000 kB\n");
  proc.Write("driver/nvidia/gpus/0000:01:00.0/information",
             "Model: \t\t NVIDIA GeForce RTX 3050 Laptop GPU\nIRQ:   \t\t 130\n");
  // The same NVIDIA GPU seen in /sys, an AMD one with a product name, an Intel one without,
  // and connectors that are not cards.
  sys.Write("class/drm/card0/device/vendor", "0x10de\n");
  sys.Write("class/drm/card1/device/vendor", "0x1002\n");
  sys.Write("class/drm/card1/device/product_name", "AMD Radeon Graphics\n");
  sys.Write("class/drm/card2/device/vendor", "0x8086\n");
  sys.Write("class/drm/card2/device/device", "0x46a6\n");
  sys.Write("class/drm/card1-eDP-1/status", "connected\n");
  sys.Write("class/drm/renderD128/device/vendor", "0x1002\n");
  CHECK(MachineDescription(proc.Path(), sys.Path()) ==
        "host: ryzen (AMD Ryzen 5 5600U with Radeon Graphics, 4 cores), 15 GiB RAM, GPU: NVIDIA "
        "GeForce RTX 3050 Laptop GPU + AMD Radeon Graphics + Intel GPU (device 0x46a6), Linux "
        "6.1.0-18-amd64");
}

TEST_CASE("the machine description leaves out what it cannot find", "[unit][scoreboard]") {
  TempDir proc("swapd-proc");
  TempDir sys("swapd-sys");
  proc.Write("sys/kernel/hostname", "pi\n");
  proc.Write("sys/kernel/osrelease", "6.6.20+rpt-rpi-v8\n");
  proc.Write("cpuinfo", "processor\t: 0\nBogoMIPS\t: 108.00\n\nModel\t\t: Raspberry Pi 5\n");
  const std::string text = MachineDescription(proc.Path(), sys.Path());
  CHECK(text == "host: pi (Raspberry Pi 5, 1 core), Linux 6.6.20+rpt-rpi-v8");
}

TEST_CASE("the machine description of this machine", "[unit][scoreboard]") {
  const std::string text = MachineDescription();
  INFO(text);
  CHECK(text.starts_with("host: "));
  CHECK(text.find(" cores") != std::string::npos);
  CHECK(text.find(" GiB RAM") != std::string::npos);
  CHECK(text.find(", Linux ") != std::string::npos);
}

}  // namespace
}  // namespace swapd::testing
