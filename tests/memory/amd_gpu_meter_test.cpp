// The AMD GPU meter (rocm-smi, daemon/amd_gpu_meter.cpp): parsing rocm-smi's memory JSON, its
// --showpids table and --showpidgpus list, attributing a process's VRAM to GPUs, and against
// tests/support/fake-rocm-smi on PATH the VRAM of a real fake-llama-server (--vram-mb), a failing
// tool, and the choice between nvidia-smi and rocm-smi.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "memory/memory_meter.h"
#include "tests/support/fake_backend_process.h"
#include "tests/support/scoped_env.h"
#include "tests/support/sizes.h"
#include "tests/support/temp_dir.h"

namespace swapd::testing {
namespace {

namespace fs = std::filesystem;

// A directory holding the fake GPU tools asked for, alone on PATH with bash's directory.
struct ToolsOnPath {
  explicit ToolsOnPath(bool rocm, bool nvidia = false)
      : path("PATH", dir.Path() + ":" + std::getenv("PATH")) {
    if (rocm)
      fs::create_symlink(SWAPD_SOURCE_DIR "/tests/support/fake-rocm-smi", dir.Path("rocm-smi"));
    if (nvidia) {
      fs::create_symlink(SWAPD_SOURCE_DIR "/tests/support/fake-nvidia-smi", dir.Path("nvidia-smi"));
    }
  }
  TempDir dir;
  ScopedEnv path;
};

TEST_CASE("ParseRocmMemInfo reads each card's total and used VRAM", "[unit][memory][amd]") {
  auto devices = ParseRocmMemInfo(
      R"json({"card0": {"VRAM Total Memory (B)": "17163091968",
                        "VRAM Total Used Memory (B)": "17453056"},
              "card1": {"VRAM Total Memory (B)": "N/A"}, "system": {"Driver version": "6.8"},
              "cardX": {}})json");
  REQUIRE(devices.size() == 2);
  CHECK(devices[0].uuid == "card0");
  CHECK(devices[0].total_bytes == 17163091968);
  CHECK(devices[0].used_bytes == 17453056);
  CHECK(devices[1].total_bytes == kUnknownBytes);
  CHECK(devices[1].used_bytes == kUnknownBytes);
  CHECK(ParseRocmMemInfo("not json").empty());
  CHECK(ParseRocmMemInfo("[1, 2]").empty());
}

TEST_CASE("ParseRocmPids reads the KFD process table", "[unit][memory][amd]") {
  const std::string text =
      "WARNING: AMD GPU device(s) is/are in a low-power state.\n"
      "===================== ROCm System Management Interface =====================\n"
      "============================== KFD Processes ===============================\n"
      "KFD process information:\n"
      "PID\tPROCESS NAME\tGPU(s)\tVRAM USED\tSDMA USED\tCU OCCUPANCY\n"
      "2728  \tllama-server\t1     \t302239744  \t0        \tUNKNOWN     \n"
      "4100\tWeb Content\t2\t1048576\t0\t3\n"
      "4200\tgmx_mpi\t1\tUNKNOWN\tUNKNOWN\tUNKNOWN\n"
      "============================================================================\n";
  auto pids = ParseRocmPids(text);
  REQUIRE(pids.size() == 3);
  CHECK(pids[2728].gpus == 1);
  CHECK(pids[2728].vram_bytes == 302239744);
  CHECK(pids[4100].gpus == 2);  // a process name with a space
  CHECK(pids[4100].vram_bytes == 1048576);
  CHECK(pids[4200].vram_bytes == kUnknownBytes);
  CHECK(ParseRocmPids("KFD process information:\nNo KFD PIDs currently running\n").empty());
}

TEST_CASE("ParseRocmPidGpus and RocmMemoryByPid attribute VRAM to GPUs", "[unit][memory][amd]") {
  auto gpus = ParseRocmPidGpus(
      "================ GPUs Indexed by PID ================\n"
      "PID 10 is using 1 DRM device(s):\n1\n"
      "PID 20 is using 2 DRM device(s):\n0 1\n"
      "PID 30 is using 0 DRM device(s):\n"
      "=====================================================\n");
  CHECK(gpus[10] == std::vector<int>{1});
  CHECK(gpus[20] == std::vector<int>{0, 1});
  CHECK(gpus[30].empty());

  std::map<int, GpuDevice> two = {{0, {"card0", 8 * 1024 * kMiB, 0}},
                                  {1, {"card1", 8 * 1024 * kMiB, 0}}};
  std::map<int, RocmProcess> processes = {
      {10, {1, 512 * kMiB}}, {20, {2, 900 * kMiB}}, {40, {1, 64 * kMiB}}};
  auto by_pid = RocmMemoryByPid(two, processes, gpus);
  CHECK(by_pid[10] == std::map<int, int64_t>{{1, 512 * kMiB}});
  // One figure for two GPUs: unknown on each, not guessed.
  CHECK(by_pid[20] == std::map<int, int64_t>{{0, kUnknownBytes}, {1, kUnknownBytes}});
  CHECK(by_pid.count(40) == 0);  // not in the pid list: on no known GPU

  std::map<int, GpuDevice> one = {{0, {"card0", 8 * 1024 * kMiB, 0}}};
  auto single = RocmMemoryByPid(one, processes, {});
  CHECK(single[40] == std::map<int, int64_t>{{0, 64 * kMiB}});  // one GPU: it is on that one
}

TEST_CASE("ReadAmdGpus reads the fake rocm-smi's GPU and the --vram-mb of a backend",
          "[integration][memory][amd]") {
  ToolsOnPath tools(/*rocm=*/true);
  Result<FakeBackend> started = StartFakeBackend({"--vram-mb", "384"});
  INFO(started.status().ToString());
  REQUIRE(started.ok());
  const FakeBackend& fake = started.value();

  for (const char* cards : {"1", "2"}) {
    ScopedEnv count("FAKE_ROCM_SMI_CARDS", cards);
    GpuReading reading = ReadGpus();  // no nvidia-smi: rocm-smi
    INFO(reading.error);
    REQUIRE(reading.available);
    CHECK(reading.tool == tools.dir.Path("rocm-smi"));
    CHECK(reading.devices.size() == std::stoul(cards));
    CHECK(reading.devices[0].total_bytes == 8192 * kMiB);
    CHECK(reading.devices[0].used_bytes == 256 * kMiB);
    CHECK(GpuMemoryOfGroup(reading, fake.process->pgid()) ==
          std::map<int, int64_t>{{0, 384 * kMiB}});
  }
}

TEST_CASE("ReadGpus: nvidia-smi first; a failing rocm-smi is an error; neither is unknown",
          "[integration][memory][amd]") {
  {
    ToolsOnPath both(/*rocm=*/true, /*nvidia=*/true);
    GpuReading reading = ReadGpus();
    CHECK(reading.tool == both.dir.Path("nvidia-smi"));
    CHECK(reading.available);
  }
  {
    ToolsOnPath rocm(/*rocm=*/true);
    ScopedEnv fail("FAKE_ROCM_SMI_FAIL", "1");
    GpuReading reading = ReadGpus();
    CHECK_FALSE(reading.available);
    CHECK_THAT(reading.error,
               Catch::Contains("exit status 2") && Catch::Contains("Driver not initialized"));
  }
  {
    TempDir empty;
    ScopedEnv path("PATH", empty.Path());
    GpuReading reading = ReadGpus();
    CHECK_FALSE(reading.available);
    CHECK(reading.error.empty());
    CHECK(reading.tool.empty());
  }
}

}  // namespace
}  // namespace swapd::testing
