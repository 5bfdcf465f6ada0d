// Unit tests of the model-server gauges (observe/model_server_gauges.h): what each is derived
// from in a Router snapshot, and their text (names, labels, the sample time as the info value).
#include <catch2/catch.hpp>

#include "observe/model_server_gauges.h"
#include "tests/support/sizes.h"

namespace swapd {
namespace {

using testing::kGiB;

ModelSnapshot Model(const std::string& id, BackendState state, int in_flight = 0, int queued = 0,
                    uint64_t ram = 0) {
  ModelSnapshot m;
  m.id = id;
  m.backend.state = state;
  m.in_flight = in_flight;
  m.queued = queued;
  m.cost.ram = ram;
  return m;
}

TEST_CASE("model-server gauges: idle node", "[unit][gateway]") {
  const ModelServerGauges g = DeriveModelServerGauges(
      {Model("a", BackendState::kStopped), Model("b", BackendState::kFailed)}, {}, 1);
  CHECK(g.waiting == 0);
  CHECK(g.running == 0);
  CHECK(g.kv_cache_usage == 0);
  CHECK(g.running_models.empty());
  CHECK(g.waiting_models.empty());
  CHECK(g.max_models == 1);
}

TEST_CASE("model-server gauges: ready, starting and waited-for models", "[unit][gateway]") {
  const std::vector<ModelSnapshot> models = {
      Model("c", BackendState::kReady, 2, 1, 4 * kGiB),     // ready, one more queued
      Model("a", BackendState::kReady, 1, 0, 2 * kGiB),     // ready
      Model("s", BackendState::kStarting, 0, 3, 1 * kGiB),  // loading, three wait for it
      Model("q", BackendState::kStopped, 0, 2),             // waited for behind a swap
      Model("x", BackendState::kStopping, 0, 0, 1 * kGiB),  // on its way out: neither list
      Model("z", BackendState::kStopped),
  };
  SECTION("with a budget: its use by every model with a process") {
    MemoryAmount budget;
    budget.ram = 16 * kGiB;
    const ModelServerGauges g = DeriveModelServerGauges(models, budget, 3);
    CHECK(g.waiting == 6);
    CHECK(g.running == 3);
    CHECK(g.kv_cache_usage == Approx(0.5));
    CHECK(g.running_models == std::vector<std::string>{"a", "c"});
    CHECK(g.waiting_models == std::vector<std::string>{"q", "s"});
    CHECK(g.max_models == 3);
  }
  SECTION("without a budget: the share of max_lora with a process, at most 1") {
    CHECK(DeriveModelServerGauges(models, {}, 8).kv_cache_usage == Approx(0.5));
    CHECK(DeriveModelServerGauges(models, {}, 2).kv_cache_usage == 1);
  }
  SECTION("a budget overrun reads as full") {
    MemoryAmount budget;
    budget.ram = 4 * kGiB;
    CHECK(DeriveModelServerGauges(models, budget, 3).kv_cache_usage == 1);
  }
}

TEST_CASE("model-server gauges: the text the endpoint picker reads", "[unit][gateway]") {
  ModelServerGauges g;
  g.waiting = 4;
  g.running = 2;
  g.kv_cache_usage = 0.25;
  g.running_models = {"a", "b"};
  g.waiting_models = {"c"};
  g.max_models = 2;
  const auto now = std::chrono::system_clock::time_point(std::chrono::milliseconds(1765000000123));
  const std::string text = RenderModelServerGauges(g, now);
  CHECK_THAT(text, Catch::Contains("# TYPE vllm:num_requests_waiting gauge\n"
                                   "vllm:num_requests_waiting 4\n"));
  CHECK_THAT(text, Catch::Contains("# TYPE vllm:num_requests_running gauge\n"
                                   "vllm:num_requests_running 2\n"));
  CHECK_THAT(text, Catch::Contains("# TYPE vllm:kv_cache_usage_perc gauge\n"
                                   "vllm:kv_cache_usage_perc 0.25\n"));
  CHECK_THAT(text, Catch::Contains("# TYPE vllm:lora_requests_info gauge\n"
                                   "vllm:lora_requests_info{max_lora=\"2\","
                                   "running_lora_adapters=\"a,b\",waiting_lora_adapters=\"c\"} "
                                   "1765000000.123\n"));
  CHECK_THAT(text, Catch::Contains("# HELP vllm:num_requests_waiting "));
  g.running_models.clear();
  g.waiting_models = {"we\"ird"};
  CHECK_THAT(RenderModelServerGauges(g, now),
             Catch::Contains("running_lora_adapters=\"\",waiting_lora_adapters=\"we\\\"ird\"}"));
}

}  // namespace
}  // namespace swapd
