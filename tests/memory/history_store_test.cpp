// The history store (memory/history_store.h) on its own: records, the latest footprint of each
// model definition, pruning, a file that is not a database; `store:` in the config; then the real
// swapd: footprints measured before a restart are known after it, before the model runs again,
// and a corrupt database leaves swapd serving without history.
#include "memory/history_store.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/config/config_test_util.h"
#include "tests/support/http_wait.h"
#include "tests/support/sizes.h"
#include "tests/support/swapd_process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

FootprintRecord Record(const std::string& model, const std::string& definition, uint64_t ram_mib,
                       uint64_t gpu0_mib = 0) {
  FootprintRecord r;
  r.model = model;
  r.definition = definition;
  r.at = 1764900000;
  r.process.rss = static_cast<int64_t>(ram_mib) * kMiB;
  r.learned.ram = ram_mib * kMiB;
  if (gpu0_mib > 0) {
    r.vram[0] = static_cast<int64_t>(gpu0_mib) * kMiB;
    r.learned.vram[0] = gpu0_mib * kMiB;
  }
  return r;
}

TEST_CASE("the history store keeps the latest footprint of each model definition",
          "[unit][memory][store]") {
  TempDir tmp("swapd-store");
  const std::string path = tmp.Path("state/swapd.db");  // the directory is created
  {
    auto store = HistoryStore::Open(path);
    INFO(store.status().message());
    REQUIRE(store.ok());
    REQUIRE(store.value()->Record(Record("a", "def1", 100)).ok());
    REQUIRE(store.value()->Record(Record("a", "def1", 120, 3000)).ok());
    REQUIRE(store.value()->Record(Record("a", "def2", 50)).ok());
    REQUIRE(store.value()->Record(Record("b", "def9", 10)).ok());
  }
  auto store = HistoryStore::Open(path);  // again: what was recorded survived
  REQUIRE(store.ok());
  auto latest = store.value()->LatestFootprints();
  REQUIRE(latest.ok());
  const auto& l = latest.value();
  REQUIRE(l.size() == 3);
  CHECK(l.at({"a", "def1"}).ram == uint64_t{120} * kMiB);
  CHECK(l.at({"a", "def1"}).vram.at(0) == uint64_t{3000} * kMiB);
  CHECK(l.at({"a", "def2"}).ram == uint64_t{50} * kMiB);
  auto history = store.value()->History("a", 10);
  REQUIRE(history.ok());
  REQUIRE(history.value().size() == 3);
  CHECK(history.value()[0].definition == "def2");  // newest first
  CHECK(history.value()[1].vram.at(0) == 3000 * kMiB);
}

TEST_CASE("the history store keeps a bounded number of rows per model definition",
          "[unit][memory][store]") {
  TempDir tmp("swapd-store");
  auto store = HistoryStore::Open(tmp.Path("swapd.db"));
  REQUIRE(store.ok());
  for (int i = 0; i < HistoryStore::kRowsPerModel + 30; ++i) {
    REQUIRE(store.value()->Record(Record("a", "d", static_cast<uint64_t>(i))).ok());
  }
  auto history = store.value()->History("a", 100000);
  REQUIRE(history.ok());
  CHECK(history.value().size() == HistoryStore::kRowsPerModel);
  CHECK(history.value().front().learned.ram == uint64_t{HistoryStore::kRowsPerModel + 29} * kMiB);
}

TEST_CASE("a file that is not a database is an error naming it, not a crash",
          "[unit][memory][store]") {
  TempDir tmp("swapd-store");
  const std::string path = tmp.Write("swapd.db", std::string(8192, 'x'));
  auto store = HistoryStore::Open(path);
  REQUIRE_FALSE(store.ok());
  CHECK_THAT(store.status().message(), Catch::Contains(path) && Catch::Contains("not a database"));
}

TEST_CASE("store.path: a path relative to the config, none, or a default from the environment",
          "[unit][config][store]") {
  auto set = Parse("store:\n  path: state/stats.sqlite\nmodels: {}\n");
  REQUIRE(set.ok());
  CHECK(set.config->store_path.ends_with("/state/stats.sqlite"));
  CHECK(set.config->store_path.front() == '/');
  auto none = Parse("store: {path: none}\nmodels: {}\n");
  REQUIRE(none.ok());
  CHECK(none.config->store_path.empty());
  auto systemd = Parse("models: {}\n", {{"STATE_DIRECTORY", "/var/lib/swapd"}});
  CHECK(systemd.config->store_path == "/var/lib/swapd/swapd.db");
  auto home = Parse("models: {}\n", {{"HOME", "/home/me"}});
  CHECK(home.config->store_path == "/home/me/.local/state/swapd/swapd.db");
  auto bad = Parse("store: {path: \"\", colour: red}\nmodels: {}\n");
  CHECK_FALSE(bad.ok());
  CHECK(FindDiag(bad, "store.path: must be a file path") != nullptr);
  CHECK(FindDiag(bad, "colour") != nullptr);
}

json ModelMemory(const SwapdInstance& swapd, const std::string& id) {
  HttpReply reply = HttpGet(swapd.base_url, "/api/models");
  REQUIRE(reply.status == 200);
  const json doc = json::parse(reply.body);
  for (const json& m : doc["models"]) {
    if (m["id"] == id) return m["memory"];
  }
  FAIL("no model " << id);
  return nullptr;
}

TEST_CASE("footprints measured before a restart are known after it, before the model runs",
          "[integration][memory][store]") {
  TempDir tmp("swapd-history");
  const std::string yaml = "store: {path: " + tmp.Path("swapd.db") +
                           "}\nmemory: {sampleInterval: 0.2}\nmodels:\n" +
                           FakeModelYaml("a", FreeLoopbackPort(), "--alloc-mb 64");
  {
    auto swapd = StartSwapd(yaml);
    REQUIRE(swapd.ok());
    HttpReply chat = HttpPost(swapd.value().base_url, "/v1/chat/completions", ChatBody("a", false));
    REQUIRE(chat.status == 200);
    REQUIRE(WaitFor(
        [&] {
          const json m = ModelMemory(swapd.value(), "a");
          return m["learned"]["ram"].get<int64_t>() >= 64 * kMiB;
        },
        20s));
    // Recorded on the sample that learned it; the process stops here (SIGTERM, drained).
    auto store = HistoryStore::Open(tmp.Path("swapd.db"));
    REQUIRE(store.ok());
    REQUIRE(WaitFor([&] { return !store.value()->History("a", 1).value().empty(); }, 20s));
  }
  auto again = StartSwapd(yaml);
  REQUIRE(again.ok());
  json m;
  REQUIRE(WaitFor(
      [&] {
        m = ModelMemory(again.value(), "a");
        return m["from_history"] == true;
      },
      20s));
  INFO(m.dump());
  CHECK(m["measured"].is_null());  // it has not run in this process
  CHECK(m["learned"]["ram"].get<int64_t>() >= 64 * kMiB);
  CHECK(m["cost"]["ram"].get<int64_t>() >= 64 * kMiB);  // the budget counts it already
}

TEST_CASE("a corrupt history database leaves swapd serving, without history",
          "[integration][memory][store]") {
  TempDir tmp("swapd-history");
  const std::string db = tmp.Write("swapd.db", std::string(8192, 'x'));
  const std::string yaml = "store: {path: " + db + "}\nmemory: {sampleInterval: 0.2}\nmodels:\n" +
                           FakeModelYaml("a", FreeLoopbackPort(), "");
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  HttpReply chat = HttpPost(swapd.value().base_url, "/v1/chat/completions", ChatBody("a", false));
  CHECK(chat.status == 200);
  HttpReply api = HttpGet(swapd.value().base_url, "/api/models");
  CHECK(json::parse(api.body)["memory"]["store"].is_null());
  HttpReply logs = HttpGet(swapd.value().base_url, "/logs");
  CHECK_THAT(logs.body,
             Catch::Contains("not a database") && Catch::Contains("swapd runs without history"));
}

}  // namespace
}  // namespace swapd::testing
