// What `swapd check` says of memory: the budget and a model's declaration, protection and model
// files (with their size), and the page-cache cliff warning for models that run together.
#include "check/check_memory.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>

#include "config/loader.h"
#include "memory/history_store.h"
#include "tests/support/temp_dir.h"

namespace swapd {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kGiB = uint64_t{1} << 30;

// A directory with two sparse 6 GiB "GGUF" files (their size is real, their blocks are not).
struct ModelFiles {
  ModelFiles() : tmp("swapd-gguf"), dir(tmp.Path()) {
    for (const char* name : {"big.gguf", "other.gguf"}) {
      fs::resize_file(tmp.Write(name, ""), 6 * kGiB);
    }
  }
  testing::TempDir tmp;
  std::string dir;
};

Config Load(const std::string& yaml) {
  LoadResult r = ParseConfig(yaml);
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  return *r.config;
}

std::string TwoModels(const ModelFiles& f, const std::string& top) {
  return top + "models:\n  a:\n    cmd: srv --port ${PORT} -m " + f.dir +
         "/big.gguf\n    memory: {ram: 1GiB}\n    swappable: false\n    pageCache: keep\n"
         "  b:\n    cmd: srv --port ${PORT} --model=" +
         f.dir + "/other.gguf\n";
}

TEST_CASE("check shows the budget and each model's memory, protection and files",
          "[unit][cli][memory]") {
  ModelFiles files;
  const Config c = Load(TwoModels(files, "memory: {ram: 14GiB, sampleInterval: 0.5}\n"));
  std::ostringstream globals, model;
  DescribeMemoryBudget(c, globals);
  CHECK_THAT(globals.str(),
             Catch::Contains("budget: ram 14.0 GiB") && Catch::Contains("onProtected: reject") &&
                 Catch::Contains("overlapSwaps: on (") && Catch::Contains("sampleInterval: 0.5s"));
  CHECK(MemoryBudgetJson(c)["overlapSwaps"] == true);
  DescribeModelMemory(c.models.at("a"), c, model);
  CHECK_THAT(model.str(), Catch::Contains("memory: ram 1.0 GiB (declared)") &&
                              Catch::Contains("pageCache: keep") &&
                              Catch::Contains("swappable: no") &&
                              Catch::Contains("big.gguf (6.0 GiB"));
  const nlohmann::json j = ModelMemoryCheckJson(c.models.at("b"), c);
  CHECK(j["modelFiles"][0]["bytes"] == 6 * kGiB);
  CHECK(j["swappable"] == true);
}

TEST_CASE("check shows what the history store learned of a model's definition",
          "[unit][cli][memory]") {
  ModelFiles files;
  const std::string db = files.tmp.Path("swapd.db");
  const Config c = Load(TwoModels(files, "store: {path: " + db + "}\n"));
  std::ostringstream before;
  DescribeModelMemory(c.models.at("b"), c, before);
  CHECK_THAT(before.str(), !Catch::Contains("learned"));  // no store file: nothing, none made
  CHECK_FALSE(fs::exists(db));
  {
    auto store = HistoryStore::Open(db);
    REQUIRE(store.ok());
    FootprintRecord r;
    r.model = "b";
    r.definition = c.models.at("b").slot_key;
    r.at = 1764936000;  // 2025-12-05 12:00 UTC
    r.learned.ram = 120u << 20;
    r.learned.vram[0] = 3u << 30;
    REQUIRE(store.value()->Record(r).ok());
    r.definition = "an older definition";
    r.learned.ram = 1;
    REQUIRE(store.value()->Record(r).ok());
  }
  std::ostringstream after;
  DescribeModelMemory(c.models.at("b"), c, after);
  CHECK_THAT(after.str(), Catch::Contains("learned: ram 120.0 MiB, gpu0 3.0 GiB (measured "
                                          "2025-12-05 12:00 UTC"));
  CHECK(ModelMemoryCheckJson(c.models.at("b"), c)["learned"]["ram"] == 120u << 20);
  CHECK(ModelMemoryCheckJson(c.models.at("a"), c)["learned"].is_null());
}

TEST_CASE("check warns when models that run together have more model files than RAM",
          "[unit][cli][memory]") {
  ModelFiles files;
  // Under a 10 GiB budget the two ungrouped models run together: 12 GiB of files + 1 GiB declared.
  const Config budget = Load(TwoModels(files, "memory: {ram: 10GiB}\n"));
  std::vector<Diagnostic> w = PageCacheWarnings(budget, 0);
  REQUIRE(w.size() == 1);
  CHECK(w[0].severity == Diagnostic::Severity::kWarning);
  CHECK_THAT(w[0].message, Catch::Contains("12.0 GiB") && Catch::Contains("page-cache cliff") &&
                               Catch::Contains("the memory budget"));
  // Without a budget the ungrouped models swap: they never run together.
  CHECK(PageCacheWarnings(Load(TwoModels(files, "")), 8 * kGiB).empty());
  // Enough RAM: no warning.
  CHECK(PageCacheWarnings(Load(TwoModels(files, "memory: {ram: 64GiB}\n")), 0).empty());
}

}  // namespace
}  // namespace swapd
