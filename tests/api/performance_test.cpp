// GET /api/performance: its body's fields, and through the real swapd as llama-swap's UI polls it:
// samples of the machine every `performance.every` (the first one `every` after the start),
// `?after=` of the last one answering none, a malformed `after` a 400, `performance.disabled` (at
// start or by a reload) 503 {"enabled": false}, and an `every` under 5 s a config error at its
// place.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "api/hardware_routes.h"
#include "tests/support/http_wait.h"
#include "tests/support/swapd_process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

std::string PerfModels() { return "models:\n" + FakeModelYaml("perf-m", FreeLoopbackPort()); }

TEST_CASE("GET /api/performance's body is llama-swap's", "[unit][performance]") {
  PerformanceSamples samples;
  SysStat s;
  s.timestamp = 1765000000;
  s.cpu_util_per_core = {12.5, 0};
  s.mem_total_mb = 16000;
  s.load = {0.5, 0.25, 0.125};
  s.net_io = {{"eth0", 1, 2}};
  samples.sys.push_back(s);
  samples.gpus = GpuStatsOf({{0, GpuDevice{"GPU-aaa", 2048ll << 20, 512ll << 20}}}, s.timestamp);
  const nlohmann::json body = PerformanceJson(samples);
  CHECK(body["enabled"] == true);
  const nlohmann::json& sys = body["sys_stats"][0];
  CHECK(sys["timestamp"] == "2025-12-06T05:46:40Z");
  CHECK(sys["cpu_util_per_core"] == nlohmann::json{12.5, 0});
  CHECK(sys["mem_total_mb"] == 16000);
  CHECK(sys["load_avg_15"] == 0.125);
  CHECK(sys["net_io"] ==
        nlohmann::json::parse(R"([{"name":"eth0","bytes_recv":1,"bytes_sent":2}])"));
  for (const char* key : {"mem_used_mb", "mem_free_mb", "swap_total_mb", "swap_used_mb",
                          "load_avg_1", "load_avg_5"}) {
    CHECK(sys.contains(key));
  }
  const nlohmann::json& gpu = body["gpu_stats"][0];
  CHECK(gpu["uuid"] == "GPU-aaa");
  CHECK(gpu["mem_used_mb"] == 512);
  CHECK(gpu["mem_util_pct"] == 25.0);
  for (const char* key : {"timestamp", "id", "name", "temp_c", "vram_temp_c", "gpu_util_pct",
                          "mem_total_mb", "fan_speed_pct", "power_draw_w"}) {
    CHECK(gpu.contains(key));
  }
  CHECK(PerformanceJson({})["gpu_stats"] == nlohmann::json::array());
}

TEST_CASE("GET /api/performance: samples every 5s, after=, a bad after, disabled by a reload",
          "[integration][performance]") {
  // The GPUs are the memory meters' (a fake nvidia-smi first on PATH).
  TempDir tools("swapd-tools");
  std::filesystem::create_symlink(SWAPD_SOURCE_DIR "/tests/support/fake-nvidia-smi",
                                  tools.Path("nvidia-smi"));
  const std::string models = PerfModels();
  auto swapd = StartSwapd("performance: {every: 5s}\n" + models, {},
                          {"PATH=" + tools.Path() + ":" + std::getenv("PATH"),
                           "FAKE_NVIDIA_SMI_GPUS=0, GPU-perf-0, 8192, 2048"});
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  // The meters read the GPUs while a model runs.
  REQUIRE(ChatStatus(url, "perf-m") == 200);
  json body;
  const bool sampled = WaitFor(
      [&] {
        HttpReply reply = HttpGet(url, "/api/performance");
        if (reply.status != 200) return false;
        body = json::parse(reply.body, nullptr, false);
        return body.is_object() && !body["sys_stats"].empty() && !body["gpu_stats"].empty();
      },
      30s, 200ms);
  INFO(body.dump());
  REQUIRE(sampled);
  CHECK(body["enabled"] == true);
  const json& gpu = body["gpu_stats"].back();
  CHECK(gpu["id"] == 0);
  CHECK(gpu["uuid"] == "GPU-perf-0");
  CHECK(gpu["mem_total_mb"] == 8192);
  CHECK(gpu["mem_used_mb"] == 2048);
  CHECK(gpu["mem_util_pct"] == 25.0);
  CHECK(gpu["timestamp"] == body["sys_stats"].back()["timestamp"]);
  const json& last = body["sys_stats"].back();
  CHECK(last["cpu_util_per_core"].size() == std::thread::hardware_concurrency());
  for (const json& core : last["cpu_util_per_core"]) {
    CHECK(core.get<double>() >= 0);
    CHECK(core.get<double>() <= 100);
  }
  CHECK(last["mem_total_mb"].get<int64_t>() > 0);
  CHECK(last["mem_used_mb"].get<int64_t>() > 0);
  CHECK(last["net_io"].is_array());
  CHECK(last["load_avg_1"].is_number());

  const std::string after = last["timestamp"];
  HttpReply none = HttpGet(url, "/api/performance?after=" + after);
  REQUIRE(none.status == 200);
  CHECK(json::parse(none.body)["sys_stats"] == json::array());
  HttpReply earlier = HttpGet(url, "/api/performance?after=2000-01-01T00:00:00Z");
  REQUIRE(earlier.status == 200);
  CHECK(json::parse(earlier.body)["sys_stats"].size() >= 1);

  HttpReply bad = HttpGet(url, "/api/performance?after=yesterday");
  CHECK(bad.status == 400);
  CHECK(json::parse(bad.body)["error"]["message"] ==
        "invalid 'after' timestamp, use RFC3339 format");

  // Polled routes stay out of the request log, as in llama-swap.
  CHECK(swapd.value().process->Output().find("GET /api/performance") == std::string::npos);

  REQUIRE(RewriteConfig(swapd.value(), "performance: {disabled: true}\n" + models));
  HttpReply reload = HttpPost(url, "/api/config/reload", "");
  REQUIRE(reload.status == 200);
  HttpReply off = HttpGet(url, "/api/performance");
  CHECK(off.status == 503);
  CHECK(json::parse(off.body) == json{{"enabled", false}});
}

TEST_CASE("performance.disabled at start: 503 {\"enabled\": false}", "[integration][performance]") {
  auto swapd = StartSwapd("performance:\n  disabled: true\n" + PerfModels());
  REQUIRE(swapd.ok());
  HttpReply off = HttpGet(swapd.value().base_url, "/api/performance");
  CHECK(off.status == 503);
  CHECK(off.content_type == "application/json");
  CHECK(json::parse(off.body) == json{{"enabled", false}});
}

TEST_CASE("performance.every under 5s: swapd does not start, and says where",
          "[integration][performance]") {
  auto swapd = StartSwapd("performance:\n  every: 1s\n" + PerfModels());
  REQUIRE_FALSE(swapd.ok());
  const std::string message = swapd.status().message();
  INFO(message);
  CHECK(message.find("config.yaml:2:10") != std::string::npos);
  CHECK(message.find("performance.every: must be at least 5s") != std::string::npos);
}

}  // namespace
}  // namespace swapd::testing
