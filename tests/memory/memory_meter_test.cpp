// The memory meters (memory/memory_meter.h): nvidia-smi output parsing and GPU sums, model files
// named by an argv, page-cache residency of files, and, against real processes, the RAM of a
// fake-llama-server group (--alloc-mb) and the GPU memory tests/support/fake-nvidia-smi reports
// for it (--vram-mb), including a missing, failing and hanging nvidia-smi.
#include "memory/memory_meter.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "backends/launcher.h"
#include "memory/process_memory.h"
#include "tests/support/fake_backend_process.h"
#include "tests/support/proc_file.h"
#include "tests/support/scoped_env.h"
#include "tests/support/sizes.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

// A directory holding tests/support/fake-nvidia-smi as "nvidia-smi", put first on PATH.
struct FakeNvidiaSmiOnPath {
  FakeNvidiaSmiOnPath()
      : link((fs::create_symlink(SWAPD_SOURCE_DIR "/tests/support/fake-nvidia-smi",
                                 dir.Path("nvidia-smi")),
              dir.Path("nvidia-smi"))),
        path("PATH", dir.Path() + ":" + std::getenv("PATH")) {}
  TempDir dir;
  std::string link;
  ScopedEnv path;
};

TEST_CASE("ParseNvidiaGpuList reads nvidia-smi's --query-gpu lines", "[unit][memory]") {
  const std::string text =
      "0, GPU-5c6e2b1a-3f7d-8e2a-9b14-0c1d2e3f4a5b, 24564, 1183\n"
      "\n"
      "1, GPU-a1b2c3d4-0000-1111-2222-333344445555, 81559, [N/A]\n"
      "   \n"
      "No devices were found\n"
      "2, GPU-ffffffff-0000-1111-2222-333344445555, [Not Supported], 0\n";
  std::map<int, GpuDevice> devices = ParseNvidiaGpuList(text);
  REQUIRE(devices.size() == 3);
  CHECK(devices[0].uuid == "GPU-5c6e2b1a-3f7d-8e2a-9b14-0c1d2e3f4a5b");
  CHECK(devices[0].total_bytes == 24564 * kMiB);
  CHECK(devices[0].used_bytes == 1183 * kMiB);
  CHECK(devices[1].total_bytes == 81559 * kMiB);
  CHECK(devices[1].used_bytes == kUnknownBytes);
  CHECK(devices[2].total_bytes == kUnknownBytes);
  CHECK(ParseNvidiaGpuList("").empty());
  CHECK(ParseNvidiaGpuList("0, GPU-x, 12 MiB, 3\n").empty());  // units were not asked for
}

TEST_CASE("ParseNvidiaComputeApps maps uuids to indexes and sums a pid per GPU", "[unit][memory]") {
  const std::map<std::string, int> uuids = {{"GPU-aaaa", 0}, {"GPU-bbbb", 1}};
  const std::string text =
      "4242, GPU-aaaa, 5120\n"
      "4242, GPU-bbbb, 3000\n"
      "\n"
      "4243, GPU-bbbb, [N/A]\n"
      "4244, GPU-aaaa, 100\n"
      "4244, GPU-aaaa, 28\n"
      "4245, GPU-unknown, 77\n"
      "[N/A], GPU-aaaa, 1\n";
  std::map<int, std::map<int, int64_t>> apps = ParseNvidiaComputeApps(text, uuids);
  CHECK(apps.size() == 3);
  CHECK(apps[4242] == std::map<int, int64_t>{{0, 5120 * kMiB}, {1, 3000 * kMiB}});
  CHECK(apps[4243] == std::map<int, int64_t>{{1, kUnknownBytes}});
  CHECK(apps[4244] == std::map<int, int64_t>{{0, 128 * kMiB}});
  CHECK(apps.count(4245) == 0);
  CHECK(ParseNvidiaComputeApps("\n\n", uuids).empty());
}

TEST_CASE("GpuMemoryOfPids sums per GPU; an unknown figure makes the sum unknown",
          "[unit][memory]") {
  GpuReading reading;
  reading.by_pid[10] = {{0, 100}, {1, 7}};
  reading.by_pid[11] = {{0, 50}};
  reading.by_pid[12] = {{1, kUnknownBytes}};
  reading.by_pid[99] = {{0, 1000}};
  CHECK(GpuMemoryOfPids(reading, {10, 11}) == std::map<int, int64_t>{{0, 150}, {1, 7}});
  CHECK(GpuMemoryOfPids(reading, {10, 11, 12}) ==
        std::map<int, int64_t>{{0, 150}, {1, kUnknownBytes}});
  CHECK(GpuMemoryOfPids(reading, {5}).empty());
}

TEST_CASE("ModelFilesOf finds -m, --model, --model= and .gguf words", "[unit][memory]") {
  using Words = std::vector<std::string>;
  CHECK(ModelFilesOf({"llama-server", "--port", "9001", "-m", "/m/qwen.gguf", "-ngl", "99"}) ==
        Words{"/m/qwen.gguf"});
  CHECK(ModelFilesOf({"llama-server", "--model", "/m/a.bin", "--mmproj", "/m/proj.gguf",
                      "--model-draft", "/m/draft.gguf", "--lora", "/m/a.bin"}) ==
        Words{"/m/a.bin", "/m/proj.gguf", "/m/draft.gguf"});
  CHECK(ModelFilesOf({"llama-server", "--model=/m/x.gguf", "-md", "/m/x.gguf", "-m"}) ==
        Words{"/m/x.gguf"});
  CHECK(ModelFilesOf({"vllm", "serve", "--port", "1"}).empty());
}

TEST_CASE("ModelFilesOf brings the sibling parts of a split GGUF that exist", "[unit][memory]") {
  TempDir dir;
  const std::string part1 = dir.Write("big-00001-of-00003.gguf", "1");
  const std::string part2 = dir.Path("big-00002-of-00003.gguf");  // absent
  const std::string part3 = dir.Write("big-00003-of-00003.gguf", "3");
  using Words = std::vector<std::string>;
  CHECK(ModelFilesOf({"llama-server", "-m", part1}) == Words{part1, part3});
  // The named part stays even when absent; the others only when present.
  CHECK(ModelFilesOf({"llama-server", "-m", part2, "--mmproj", part3}) ==
        Words{part1, part2, part3});
  const std::string lone = dir.Path("odd-00001-of-0003.gguf");
  CHECK(ModelFilesOf({"llama-server", "-m", lone}) == Words{lone});
}

TEST_CASE("FilesInPageCache: sizes, resident bytes and missing files", "[unit][memory]") {
  TempDir dir;
  const std::string text(3 * 1024 * 1024 + 123, 'x');
  const std::string written = dir.Write("model.gguf", text);
  const std::string empty = dir.Write("empty.gguf", "");

  FileCache cache = FilesInPageCache({written, empty, dir.Path("absent.gguf"), dir.Path()});
  CHECK(cache.bytes == static_cast<int64_t>(text.size()));
  CHECK(cache.cached > 0);  // just written: its pages are in the page cache
  CHECK(cache.cached <= cache.bytes);
  CHECK(cache.missing == 2);  // the absent file and the directory
  CHECK(cache.unmeasured == 0);

  // A sparse 3 GiB file with one written page past 2 GiB: three mincore windows, and only the
  // written page (and not the holes) resident.
  const std::string sparse = dir.Path("sparse.gguf");
  const int fd = ::open(sparse.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  REQUIRE(fd >= 0);
  const int64_t size = int64_t{3} << 30;
  const std::string page(4096, 'y');
  const bool wrote = ::ftruncate(fd, size) == 0 &&
                     ::pwrite(fd, page.data(), page.size(), (int64_t{5} << 29) + 4096) ==
                         static_cast<ssize_t>(page.size());
  ::close(fd);
  REQUIRE(wrote);
  FileCache sparse_cache = FilesInPageCache({sparse});
  CHECK(sparse_cache.bytes == size);
  CHECK(sparse_cache.cached >= 4096);
  CHECK(sparse_cache.cached < 64 * kMiB);
  CHECK(sparse_cache.missing == 0);
}

TEST_CASE("ProcessGroupMemory counts fake-llama-server's --alloc-mb memory",
          "[integration][memory]") {
  Result<FakeBackend> started = StartFakeBackend({"--alloc-mb", "64", "--spawn-grandchild"});
  INFO(started.status().ToString());
  REQUIRE(started.ok());
  const FakeBackend& fake = started.value();
  const int pgid = fake.process->pgid();
  CHECK(ProcessGroupPids(pgid).size() == 2);  // the backend and its grandchild

  ProcessMemory memory;
  const bool grew = WaitFor([&] {
    memory = ProcessGroupMemory(pgid);
    return memory.anon >= 60 * kMiB;
  });
  INFO("rss " << memory.rss << " anon " << memory.anon << " file " << memory.file << "\n"
              << fake.process->Output());
  CHECK(grew);
  CHECK(memory.rss >= memory.anon);
  CHECK(memory.file > 0);  // the mapped binary and libraries

  fake.process->Kill();
  // The grandchild may linger as a zombie of the group until init reaps it: it holds nothing.
  CHECK(WaitFor([&] { return ProcessGroupMemory(pgid).rss == 0; }));
}

TEST_CASE("BackendPids counts a server that left its backend's process group",
          "[integration][memory][containment]") {
  // A wrapper whose server (here a fake llama-server holding 64 MiB) runs in a new session.
  auto spawned = DefaultLauncher().Spawn(
      {{"/bin/sh", "-c",
        std::string("setsid ") + FAKE_BACKEND_BINARY + " --port 0 --alloc-mb 64 & wait"},
       {},
       "meter-model"});
  REQUIRE(spawned.ok());
  std::unique_ptr<ChildProcess> child = std::move(spawned).value();
  BackendInfo info;
  info.pid = child->pid();
  info.scope = child->scope();
  std::vector<int> pids;
  int64_t rss = 0;
  const bool counted = WaitFor([&] {
    pids = BackendPids(info);
    rss = ResidentBytesOf(pids);
    return pids.size() == 2 && rss >= 60 * kMiB;
  });
  INFO("pids " << pids.size() << ", rss " << rss);
  CHECK(counted);
  CHECK(ProcessGroupPids(child->pgid()).size() == 1);  // the group alone misses the server
  child.reset();                                       // kills the whole run
  CHECK(WaitFor([&] { return ResidentBytesOf(BackendPids(info)) == 0; }));
}

TEST_CASE("ReadNvidiaGpus reads the fake nvidia-smi's GPU and the --vram-mb of a backend",
          "[integration][memory]") {
  FakeNvidiaSmiOnPath on_path;
  Result<FakeBackend> started = StartFakeBackend({"--vram-mb", "512"});
  INFO(started.status().ToString());
  REQUIRE(started.ok());
  const FakeBackend& fake = started.value();

  GpuReading reading = ReadNvidiaGpus();
  INFO(reading.error);
  REQUIRE(reading.available);
  CHECK(reading.error.empty());
  CHECK(reading.tool == on_path.link);
  REQUIRE(reading.devices.count(0) == 1);
  CHECK(reading.devices[0].uuid == "GPU-fake-0");
  CHECK(reading.devices[0].total_bytes == 4096 * kMiB);
  CHECK(reading.by_pid[fake.process->pid()] == std::map<int, int64_t>{{0, 512 * kMiB}});
  CHECK(GpuMemoryOfGroup(reading, fake.process->pgid()) == std::map<int, int64_t>{{0, 512 * kMiB}});
}

TEST_CASE("ReadNvidiaGpus reads output larger than a pipe's buffer", "[integration][memory]") {
  FakeNvidiaSmiOnPath on_path;
  std::string gpus;
  for (int i = 0; i < 3000; ++i) {
    gpus += std::to_string(i) + ", GPU-fake-" + std::to_string(i) + ", 4096, 1;";
  }
  ScopedEnv devices("FAKE_NVIDIA_SMI_GPUS", gpus);  // ~90 KB of output
  GpuReading reading = ReadNvidiaGpus();
  INFO(reading.error);
  CHECK(reading.available);
  CHECK(reading.devices.size() == 3000);
  CHECK(reading.devices[2999].uuid == "GPU-fake-2999");
}

TEST_CASE("ReadNvidiaGpus: no nvidia-smi on PATH is unknown, not an error",
          "[integration][memory]") {
  TempDir empty;
  ScopedEnv path("PATH", empty.Path());
  GpuReading reading = ReadNvidiaGpus();
  CHECK_FALSE(reading.available);
  CHECK(reading.error.empty());
  CHECK(reading.tool.empty());
  CHECK(reading.devices.empty());
}

TEST_CASE("ReadNvidiaGpus: a failing nvidia-smi is an error with its exit status",
          "[integration][memory]") {
  FakeNvidiaSmiOnPath on_path;
  ScopedEnv fail("FAKE_NVIDIA_SMI_FAIL", "1");
  GpuReading reading = ReadNvidiaGpus();
  CHECK_FALSE(reading.available);
  CHECK(reading.tool == on_path.link);
  CHECK_THAT(reading.error, Catch::Contains("exit status 9"));
  CHECK_THAT(reading.error, Catch::Contains("Driver/library version mismatch"));
}

TEST_CASE("ReadNvidiaGpus: a hanging nvidia-smi is killed with what it started",
          "[integration][memory]") {
  FakeNvidiaSmiOnPath on_path;
  const std::string pid_file = on_path.dir.Path("sleeper.pid");
  ScopedEnv hang("FAKE_NVIDIA_SMI_HANG", pid_file);
  const auto start = std::chrono::steady_clock::now();
  GpuReading reading = ReadNvidiaGpus(milliseconds(1000));
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK_FALSE(reading.available);
  CHECK_THAT(reading.error, Catch::Contains("no answer within 1000 ms"));
  CHECK(took >= milliseconds(1000));
  CHECK(took < seconds(10));

  // The sleeper held the tool's stdout open; it went with the tool's process group.
  std::string pid_text;
  std::ifstream(pid_file) >> pid_text;
  REQUIRE_FALSE(pid_text.empty());
  const int sleeper = std::stoi(pid_text);
  CHECK(WaitFor([&] {
    const ProcStat st = ReadProcStat(sleeper);
    return st.pid == 0 || st.state == 'Z';
  }));
}

}  // namespace
}  // namespace swapd::testing
