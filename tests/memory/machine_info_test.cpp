// Unit tests of what GET /api/hardware reads of the machine (/proc/cpuinfo, /proc/meminfo,
// os-release) and of the snapshot it renders in llama-swap's shape.
#include <catch2/catch.hpp>

#include "api/hardware_routes.h"
#include "memory/machine_info.h"

namespace swapd {
namespace {

using nlohmann::json;

TEST_CASE("cpuinfo: vendor, model, sockets, cores and threads", "[unit][routes]") {
  // Two sockets, two cores each, hyper-threaded on socket 0 only: 6 threads.
  std::string text;
  const std::pair<int, int> cpus[] = {{0, 0}, {0, 0}, {0, 1}, {0, 1}, {1, 0}, {1, 1}};
  int processor = 0;
  for (const auto& [socket, core] : cpus) {
    text += "processor\t: " + std::to_string(processor++) +
            "\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU E5-2680 v4 @ "
            "2.40GHz\nphysical id\t: " +
            std::to_string(socket) + "\ncore id\t\t: " + std::to_string(core) + "\n\n";
  }
  CpuInfo cpu = ParseCpuInfo(text);
  CHECK(cpu.vendor == "GenuineIntel");
  CHECK(cpu.model == "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz");
  CHECK(cpu.sockets == 2);
  CHECK(cpu.cores == 4);
  CHECK(cpu.threads == 6);

  // An ARM kernel: no model name, no physical id.
  CpuInfo arm = ParseCpuInfo("processor\t: 0\nBogoMIPS\t: 48.00\n\nprocessor\t: 1\n");
  CHECK(arm.threads == 2);
  CHECK(arm.model.empty());
  CHECK(arm.sockets == 0);
  CHECK(arm.cores == 0);
}

TEST_CASE("meminfo and os-release", "[unit][routes]") {
  RamInfo ram = ParseMemInfo(
      "MemTotal:       16281996 kB\nMemFree:         1000 kB\n"
      "MemAvailable:    8000000 kB\n");
  CHECK(ram.total == 16281996ull * 1024);
  CHECK(ram.available == 8000000ull * 1024);
  const char* os = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\nVERSION_ID=\"12\"\n";
  CHECK(OsReleaseValue(os, "ID") == "debian");
  CHECK(OsReleaseValue(os, "VERSION_ID") == "12");
  CHECK(OsReleaseValue(os, "NAME").empty());
}

TEST_CASE("/api/hardware: llama-swap's HardwareSnapshot from what swapd knows", "[unit][routes]") {
  MachineInfo machine;
  machine.cpu = {"AuthenticAMD", "AMD Ryzen 7 5800H", 1, 8, 16};
  machine.ram = {16ull << 30, 9ull << 30};
  machine.arch = "aarch64";
  machine.kernel = "6.1.0-18-amd64";
  machine.os_id = "debian";
  MemoryView view;
  view.gpu_tool = "/usr/bin/nvidia-smi";
  view.gpus[0] = GpuDevice{"GPU-1", 4ll << 30, 1ll << 30};
  view.gpus[1] = GpuDevice{"GPU-2", kUnknownBytes, kUnknownBytes};
  json hw = HardwareJson(machine, view, 1767225600);
  CHECK(hw["schema_version"] == 1);
  CHECK(hw["captured_at"] == "2026-01-01T00:00:00Z");
  CHECK(hw["capture"]["scope"] == "inference_host");
  CHECK(hw["capture"]["method"] == "detected");
  CHECK(hw["capture"]["detector"]["name"] == "swapd");
  CHECK(hw["architecture"] == json{{"name", "arm64"}, {"raw_name", "aarch64"}});
  CHECK(hw["operating_system"] == json{{"family", "linux"},
                                       {"name", "debian"},
                                       {"version", nullptr},
                                       {"kernel", "6.1.0-18-amd64"}});
  CHECK(hw["environment"]["kind"] == "unknown");
  CHECK(hw["cpu"] == json{{"vendor", "AuthenticAMD"},
                          {"model", "AMD Ryzen 7 5800H"},
                          {"socket_count", 1},
                          {"physical_core_count", 8},
                          {"logical_thread_count", 16}});
  CHECK(hw["memory"] == json{{"capacity_bytes", 16ull << 30}, {"available_bytes", 9ull << 30}});
  REQUIRE(hw["accelerators"].size() == 2);
  CHECK(hw["accelerators"][0] ==
        json{{"index", 0},
             {"kind", "gpu"},
             {"vendor", "NVIDIA"},
             {"model", nullptr},
             {"architecture", nullptr},
             {"memory",
              {{"kind", "dedicated"}, {"capacity_bytes", 4ll << 30}, {"used_bytes", 1ll << 30}}},
             {"driver", nullptr},
             {"power_limit_watts", nullptr}});
  CHECK(hw["accelerators"][1]["index"] == 1);
  CHECK(hw["accelerators"][1]["memory"] ==
        json{{"kind", "dedicated"}, {"capacity_bytes", nullptr}});

  machine.arch = "x86_64";
  machine.container = "Docker";
  view.gpus.clear();
  json docker = HardwareJson(machine, view, 0);
  CHECK(docker["architecture"] == json{{"name", "x86_64"}, {"raw_name", nullptr}});
  CHECK(docker["environment"] ==
        json{{"kind", "container"}, {"name", "Docker"}, {"version", nullptr}});
  CHECK(docker["accelerators"] == json::array());
}

}  // namespace
}  // namespace swapd
