// swapd's memory keys: the top-level `memory:` (budgets, auto against a reading of the machine,
// margin, onProtected, sampleInterval, overlapSwaps) and a model's `memory`, `pageCache` and
// `swappable`, each problem at its place; with a budget, ungrouped models no longer swap one
// another.
#include <catch2/catch.hpp>

#include "tests/config/config_test_util.h"

namespace swapd {
namespace {

using testing::At;
using testing::CountSeverity;
using testing::FindDiag;
using testing::Model;
using testing::Parse;

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST_CASE("memory budgets and a model's memory keys are read", "[unit][config][budget]") {
  auto r = Parse(R"yaml(
memory:
  ram: 14GiB
  gpus: {0: 3.5GiB, 1: 8589934592}
  onProtected: wait
  sampleInterval: 0.5
  evictProtectedKeys: [sk-admin]
  overlapSwaps: false
models:
  big:
    cmd: "srv --port ${PORT} -m /models/big.gguf"
    memory: {ram: 10GiB}
    pageCache: keep
    swappable: false
    minResidency: 300
    prefetch: true
  small:
    cmd: "srv --port ${PORT}"
    memory: {ram: 512MiB, vram: 3GiB}
  multi:
    cmd: "srv --port ${PORT}"
    memory: {vram: {0: 1GiB, 1: 2GiB}}
)yaml");
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  CHECK(CountSeverity(r, Diagnostic::Severity::kWarning) == 0);
  const MemoryConfig& m = r.config->memory;
  CHECK(m.budget.ram == 14 * kGiB);
  CHECK(m.budget.vram.at(0) == 7 * kGiB / 2);
  CHECK(m.budget.vram.at(1) == 8 * kGiB);
  CHECK(m.wait_for_protected);
  CHECK(m.sample_interval == std::chrono::milliseconds(500));
  CHECK(m.evict_protected_keys == std::vector<std::string>{"sk-admin"});
  CHECK_FALSE(m.overlap_swaps);
  const ModelConfig& big = Model(r, "big");
  CHECK(big.memory.ram == 10 * kGiB);
  CHECK(big.keep_page_cache);
  CHECK_FALSE(big.swappable);
  CHECK(big.min_residency == std::chrono::seconds(300));
  CHECK(big.prefetch);
  const ModelConfig& small = Model(r, "small");
  CHECK(small.memory.ram == 512 * kMiB);
  CHECK(small.memory.vram == std::map<int, uint64_t>{{0, 3 * kGiB}});
  CHECK(small.swappable);
  CHECK_FALSE(small.keep_page_cache);
  CHECK(small.min_residency == std::chrono::seconds(0));
  CHECK_FALSE(small.prefetch);
  CHECK(Model(r, "multi").memory.vram == std::map<int, uint64_t>{{0, kGiB}, {1, 2 * kGiB}});
  // With a budget, the ungrouped models do not swap one another: the budget decides.
  const GroupConfig& fallback = r.config->groups.at(std::string(kDefaultGroup));
  CHECK_FALSE(fallback.swap);
  CHECK_FALSE(fallback.exclusive);
}

TEST_CASE("without a budget, ungrouped models swap as in llama-swap", "[unit][config][budget]") {
  auto r = Parse("models:\n  a:\n    cmd: srv --port ${PORT}\n    swappable: false\n");
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  CHECK_FALSE(r.config->memory.HasBudget());
  CHECK(r.config->memory.overlap_swaps);  // on by default; it acts only under a budget
  CHECK(r.config->groups.at(std::string(kDefaultGroup)).swap);
  CHECK(r.config->groups.at(std::string(kDefaultGroup)).exclusive);
}

TEST_CASE("bad memory values are errors at their place", "[unit][config][budget]") {
  auto r = Parse(R"yaml(
memory:
  ram: lots
  gpus: {first: 3GiB}
  onProtected: maybe
  sampleInterval: -1
  colour: blue
models:
  a:
    cmd: "srv --port ${PORT}"
    memory: {ram: [1], vram: {0: huge}, disk: 1GiB}
    pageCache: sometimes
    minResidency: -5
    prefetch: maybe
)yaml");
  REQUIRE_FALSE(r.ok());
  const Diagnostic* ram = FindDiag(r, "memory.ram: expected a size");
  CHECK(At(ram) == "3:8");
  CHECK(At(FindDiag(r, "a GPU index must be a whole number")) == "4:10");
  CHECK(At(FindDiag(r, "memory.onProtected: must be wait or reject")) == "5:16");
  CHECK(At(FindDiag(r, "memory.sampleInterval")) == "6:19");
  CHECK(FindDiag(r, "colour") != nullptr);
  CHECK(At(FindDiag(r, "model \"a\": memory.ram: expected a size")) == "11:19");
  CHECK(At(FindDiag(r, "memory.vram.0: expected a size")) == "11:34");
  CHECK(FindDiag(r, "disk") != nullptr);
  CHECK(At(FindDiag(r, "pageCache: must be keep or auto")) == "12:16");
  CHECK(At(FindDiag(r, "minResidency: expected seconds between 0 and 604800")) == "13:19");
  CHECK(At(FindDiag(r, "prefetch")) == "14:15");
}

TEST_CASE("memory.overlapSwaps takes true or false", "[unit][config][budget]") {
  auto r = Parse("memory:\n  ram: 8GiB\n  overlapSwaps: sometimes\nmodels: {}\n");
  REQUIRE_FALSE(r.ok());
  CHECK(At(FindDiag(r, "overlapSwaps")) == "3:17");
}

TEST_CASE("auto budgets are what the machine has minus the margin", "[unit][config][budget]") {
  const char* yaml =
      "memory: {ram: auto, gpus: auto}\nmodels:\n  a:\n    cmd: srv --port ${PORT}\n";
  LoadOptions options = testing::OptionsWithEnv({});
  MachineMemory machine;
  machine.ram = 16 * kGiB;
  machine.gpus[0] = 4 * kGiB;
  options.machine = machine;
  auto r = ParseConfig(yaml, "config.yaml", options);
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  CHECK(r.config->memory.budget.ram == 16 * kGiB - 16 * kGiB / 10);    // 10%
  CHECK(r.config->memory.budget.vram.at(0) == 4 * kGiB - 512 * kMiB);  // at least 512 MiB

  auto with_margin =
      ParseConfig("memory: {ram: auto, margin: 2GiB}\nmodels:\n  a:\n    cmd: srv --port ${PORT}\n",
                  "config.yaml", options);
  REQUIRE(with_margin.ok());
  CHECK(with_margin.config->memory.budget.ram == 14 * kGiB);

  machine.gpus.clear();
  machine.gpu_note = "nvidia-smi not found";
  options.machine = machine;
  auto no_gpu = ParseConfig(yaml, "config.yaml", options);
  REQUIRE(no_gpu.ok());
  const Diagnostic* d = FindDiag(no_gpu, "memory.gpus: auto, but no GPU was found");
  REQUIRE(d != nullptr);
  CHECK(d->severity == Diagnostic::Severity::kWarning);
  CHECK(d->message.find("nvidia-smi not found") != std::string::npos);
  CHECK(no_gpu.config->memory.budget.vram.empty());
  CHECK(no_gpu.config->memory.budget.ram.has_value());
}

}  // namespace
}  // namespace swapd
