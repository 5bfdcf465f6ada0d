// Memory-aware residency end to end: the real swapd with fake backends that allocate memory
// (--alloc-mb) and "use" GPU memory reported by tests/support/fake-nvidia-smi on PATH (--vram-mb).
// Learned footprints in /api/models and /metrics, the duo kept by budgets instead of a group, a
// budget eviction of the one model that must go, a protected model answered with 503 +
// Retry-After, and the GPU tool missing or failing.
#include <httplib.h>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/http_wait.h"
#include "tests/support/sizes.h"
#include "tests/support/swapd_process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
namespace fs = std::filesystem;

// A temporary directory for tools, with a fake nvidia-smi in it when asked.
struct ToolDir {
  explicit ToolDir(bool with_nvidia_smi) : dir("swapd-tools"), path(dir.Path()) {
    if (with_nvidia_smi) {
      fs::create_symlink(SWAPD_SOURCE_DIR "/tests/support/fake-nvidia-smi", dir.Path("nvidia-smi"));
    }
  }
  // PATH with this directory first (or alone: then no nvidia-smi is found at all).
  std::string Path(bool alone = false) const {
    return "PATH=" + path + (alone ? "" : std::string(":") + std::getenv("PATH"));
  }
  TempDir dir;
  std::string path;
};

json ApiModels(const SwapdInstance& swapd) {
  HttpReply reply = HttpGet(swapd.base_url, "/api/models");
  REQUIRE(reply.status == 200);
  return json::parse(reply.body);
}

json ModelEntry(const json& api, const std::string& id) {
  for (const json& m : api["models"]) {
    if (m["id"] == id) return m;
  }
  FAIL("no model " << id << " in /api/models");
  return nullptr;
}

std::string StateOf(const SwapdInstance& swapd, const std::string& id) {
  return ModelEntry(ApiModels(swapd), id)["state"].get<std::string>();
}

void Chat(const SwapdInstance& swapd, const std::string& model) {
  HttpReply reply = HttpPost(swapd.base_url, "/v1/chat/completions", ChatBody(model, false));
  INFO(reply.Describe());
  REQUIRE(reply.status == 200);
}

TEST_CASE("swapd learns what a model holds in RAM, VRAM and page cache", "[integration][memory]") {
  ToolDir tools(/*with_nvidia_smi=*/true);
  const std::string weights = tools.path + "/weights.gguf";
  std::ofstream(weights) << std::string(static_cast<size_t>(8 * kMiB), 'w');
  const int port = FreeLoopbackPort();
  const std::string yaml = "memory: {sampleInterval: 0.2}\nmodels:\n" +
                           FakeModelYaml("a", port, "--alloc-mb 96 --vram-mb 700 --lora " + weights,
                                         "    pageCache: keep\n");
  auto swapd = StartSwapd(yaml, {}, {tools.Path()});
  REQUIRE(swapd.ok());
  Chat(swapd.value(), "a");

  json memory;
  REQUIRE(WaitFor(
      [&] {
        memory = ModelEntry(ApiModels(swapd.value()), "a")["memory"];
        return !memory["measured"].is_null() && memory["measured"]["anon_bytes"] >= 90 * kMiB &&
               !memory["measured"]["vram_bytes"].empty();
      },
      20s));
  INFO(memory.dump());
  CHECK(memory["measured"]["vram_bytes"]["0"] == 700 * kMiB);
  CHECK(memory["files"]["bytes"] == 8 * kMiB);
  CHECK(memory["files"]["paths"].size() == 2);  // --model a (not a file here) and the .gguf
  CHECK(memory["files"]["missing"] == 1);
  CHECK(memory["page_cache"] == "keep");
  // pageCache: keep counts the whole files beside the anonymous memory.
  CHECK(memory["cost"]["ram"] >= 96 * kMiB + 8 * kMiB);
  CHECK(memory["cost"]["vram"]["0"] == 700 * kMiB);
  json api = ApiModels(swapd.value());
  CHECK(api["memory"]["gpu_tool"].get<std::string>().find("nvidia-smi") != std::string::npos);
  CHECK(api["memory"]["gpus"]["0"]["total_bytes"] == 4096 * kMiB);

  HttpReply metrics = HttpGet(swapd.value().base_url, "/metrics");
  CHECK_THAT(metrics.body,
             Catch::Contains("swapd_backend_gpu_memory_bytes{model=\"a\",gpu=\"0\"} 734003200"));
  CHECK_THAT(metrics.body, Catch::Contains("swapd_model_file_bytes{model=\"a\"} 8388608"));
  CHECK_THAT(
      metrics.body,
      Catch::Contains("swapd_model_memory_cost_bytes{model=\"a\",resource=\"gpu0\"} 734003200"));
  CHECK_THAT(metrics.body, Catch::Contains("swapd_gpu_tool_up 1"));

  // The history store keeps what was learned: GET /api/memory/history shows its rows.
  json history;
  REQUIRE(WaitFor(
      [&] {
        HttpReply reply = HttpGet(swapd.value().base_url, "/api/memory/history?model=a&limit=5");
        if (reply.status != 200) return false;
        history = json::parse(reply.body);
        return !history["records"].empty() &&
               history["records"][0]["learned"]["vram"]["0"] == 700 * kMiB;
      },
      20s));
  INFO(history.dump());
  CHECK(history["model"] == "a");
  CHECK(history["records"].size() <= 5);
  const json& newest = history["records"][0];
  CHECK(newest["anon_bytes"] >= 90 * kMiB);
  CHECK(newest["vram_bytes"]["0"] == 700 * kMiB);
  CHECK(newest["at"].get<std::string>().size() == 20);  // RFC 3339, UTC
  CHECK(newest["definition"].get<std::string>().size() == 16);
  CHECK(HttpGet(swapd.value().base_url, "/api/memory/history").status == 400);
  CHECK(HttpGet(swapd.value().base_url, "/api/memory/history?model=a&limit=0").status == 400);
  CHECK(json::parse(
            HttpGet(swapd.value().base_url, "/api/memory/history?model=nobody").body)["records"]
            .empty());
}

// The duo of examples/duo.yaml, kept together by budgets instead of a group.
TEST_CASE("swapd learns GPU memory from rocm-smi on an AMD machine", "[integration][memory][amd]") {
  ToolDir tools(/*with_nvidia_smi=*/false);
  fs::create_symlink(SWAPD_SOURCE_DIR "/tests/support/fake-rocm-smi", tools.dir.Path("rocm-smi"));
  const std::string yaml = "memory: {sampleInterval: 0.2, gpus: auto}\nmodels:\n" +
                           FakeModelYaml("a", FreeLoopbackPort(), "--vram-mb 600");
  auto swapd = StartSwapd(yaml, {}, {tools.Path()});
  REQUIRE(swapd.ok());
  Chat(swapd.value(), "a");
  json memory;
  REQUIRE(WaitFor(
      [&] {
        memory = ModelEntry(ApiModels(swapd.value()), "a")["memory"];
        return !memory["measured"].is_null() && !memory["measured"]["vram_bytes"].empty();
      },
      20s));
  INFO(memory.dump());
  CHECK(memory["measured"]["vram_bytes"]["0"] == 600 * kMiB);
  CHECK(memory["cost"]["vram"]["0"] == 600 * kMiB);
  const json api = ApiModels(swapd.value());
  INFO(api["memory"].dump());
  CHECK(api["memory"]["gpu_tool"].get<std::string>().find("rocm-smi") != std::string::npos);
  CHECK(api["memory"]["gpus"]["0"]["total_bytes"] == 8192 * kMiB);
  // gpus: auto took the card's 8 GiB less the margin (10%).
  CHECK(api["memory"]["budget"]["vram"]["0"] == 8192 * kMiB - 8192 * kMiB / 10);
}

std::string BudgetDuoYaml(int cpu, int gpu, int small, int big, const std::string& cpu_extra = "") {
  return "memory:\n  ram: 2GiB\n  gpus: {0: 3.5GiB}\n  sampleInterval: 0.2\n"
         "  evictProtectedKeys: [sk-admin]\nmodels:\n" +
         FakeModelYaml("duo-cpu", cpu, "", "    memory: {ram: 1GiB}\n" + cpu_extra) +
         FakeModelYaml("duo-gpu", gpu, "--vram-mb 3072",
                       "    memory: {ram: 256MiB, vram: 3GiB}\n") +
         FakeModelYaml("small", small, "", "    memory: {ram: 512MiB}\n") +
         FakeModelYaml("gpu-big", big, "--vram-mb 2048", "    memory: {ram: 128MiB, vram: 2GiB}\n");
}

TEST_CASE(
    "budgets: a model that fits beside the duo does not unload it; one that does not "
    "evicts only what it must",
    "[integration][memory]") {
  ToolDir tools(true);
  auto swapd = StartSwapd(
      BudgetDuoYaml(FreeLoopbackPort(), FreeLoopbackPort(), FreeLoopbackPort(), FreeLoopbackPort()),
      {}, {tools.Path()});
  REQUIRE(swapd.ok());
  const SwapdInstance& s = swapd.value();
  Chat(s, "duo-cpu");
  Chat(s, "duo-gpu");
  Chat(s, "small");  // 1 + 0.25 + 0.5 GiB of RAM fit in 2 GiB
  CHECK(StateOf(s, "duo-cpu") == "ready");
  CHECK(StateOf(s, "duo-gpu") == "ready");
  CHECK(StateOf(s, "small") == "ready");

  Chat(s, "gpu-big");  // 3 + 2 GiB of VRAM exceed 3.5 GiB: the duo's GPU model goes, alone
  CHECK(StateOf(s, "duo-gpu") == "stopped");
  CHECK(StateOf(s, "duo-cpu") == "ready");
  CHECK(StateOf(s, "small") == "ready");
  HttpReply metrics = HttpGet(s.base_url, "/metrics");
  CHECK_THAT(metrics.body, Catch::Contains("reason=\"budget\""));
  HttpReply logs = HttpGet(s.base_url, "/logs");
  CHECK_THAT(logs.body, Catch::Contains("model duo-gpu: stopping (budget)"));
  CHECK_THAT(logs.body, Catch::Contains("evict [duo-gpu]"));
}

TEST_CASE("budgets: a request that would evict a protected model gets 503 + Retry-After",
          "[integration][memory]") {
  ToolDir tools(true);
  const int solo = FreeLoopbackPort();
  const std::string yaml =
      BudgetDuoYaml(FreeLoopbackPort(), FreeLoopbackPort(), FreeLoopbackPort(), FreeLoopbackPort(),
                    "    swappable: false\n    ttl: 600\n") +
      FakeModelYaml("solo", solo, "", "    memory: {ram: 1536MiB}\n");
  auto swapd = StartSwapd(yaml, {}, {tools.Path()});
  REQUIRE(swapd.ok());
  const SwapdInstance& s = swapd.value();
  Chat(s, "duo-cpu");

  httplib::Client client(s.base_url);
  auto res = client.Post("/v1/chat/completions", ChatBody("solo", false), "application/json");
  REQUIRE(res);
  CHECK(res->status == 503);
  CHECK(res->get_header_value("Retry-After") == "60");
  const json error = json::parse(res->body)["error"];
  CHECK_THAT(error["message"].get<std::string>(),
             Catch::Contains("duo-cpu") && Catch::Contains("swappable: false"));
  CHECK(StateOf(s, "duo-cpu") == "ready");
  CHECK(StateOf(s, "solo") == "stopped");
  // A key of memory.evictProtectedKeys may evict it anyway.
  auto admin = client.Post("/v1/chat/completions", {{"Authorization", "Bearer sk-admin"}},
                           ChatBody("solo", false), "application/json");
  REQUIRE(admin);
  CHECK(admin->status == 200);
  CHECK(StateOf(s, "duo-cpu") == "stopped");
  CHECK_THAT(HttpGet(s.base_url, "/logs").body,
             Catch::Contains("is stopped for a request with a key of memory.evictProtectedKeys"));
  // A model that is too big for the budget at all is refused too, naming the budget.
  const std::string too_big =
      "memory: {ram: 1GiB}\nmodels:\n" +
      FakeModelYaml("huge", FreeLoopbackPort(), "", "    memory: {ram: 2GiB}\n");
  auto other = StartSwapd(too_big);
  REQUIRE(other.ok());
  HttpReply refused =
      HttpPost(other.value().base_url, "/v1/chat/completions", ChatBody("huge", false));
  CHECK(refused.status == 503);
  CHECK_THAT(refused.body, Catch::Contains("more than the memory budget (ram 1.0 GiB)"));
}

TEST_CASE(
    "without a GPU tool, or with a failing one, memory is still measured and requests "
    "are served",
    "[integration][memory]") {
  for (const bool failing : {false, true}) {
    DYNAMIC_SECTION((failing ? "failing" : "absent") << " nvidia-smi") {
      ToolDir tools(/*with_nvidia_smi=*/failing);
      std::vector<std::string> env = {tools.Path(/*alone=*/!failing)};
      if (failing) env.push_back("FAKE_NVIDIA_SMI_FAIL=1");
      const std::string yaml =
          "memory: {sampleInterval: 0.2}\nmodels:\n" +
          FakeModelYaml("a", FreeLoopbackPort(), "--alloc-mb 32 --vram-mb 100");
      auto swapd = StartSwapd(yaml, {}, env);
      REQUIRE(swapd.ok());
      Chat(swapd.value(), "a");
      json api;
      REQUIRE(WaitFor(
          [&] {
            api = ApiModels(swapd.value());
            return !ModelEntry(api, "a")["memory"]["measured"].is_null();
          },
          20s));
      INFO(api.dump());
      const json measured = ModelEntry(api, "a")["memory"]["measured"];
      CHECK(measured["anon_bytes"] >= 30 * kMiB);
      CHECK(measured["vram_bytes"].empty());  // unknown, not an error
      if (failing) {
        CHECK_THAT(api["memory"]["gpu_error"].get<std::string>(), Catch::Contains("exit status 9"));
      } else {
        CHECK(api["memory"]["gpu_tool"].is_null());
        CHECK(api["memory"]["gpu_error"] == "");
      }
      Chat(swapd.value(), "a");
    }
  }
}

}  // namespace
}  // namespace swapd::testing
