// The bench store (scoreboard/bench_store.h) on its own: rows round-trip with their machine, the
// previous run of the same (model, mode, partner), the scoreboard's newest row of each, the
// bound per model, a file that survives reopening and is read fresh after another writer.
#include "scoreboard/bench_store.h"

#include <catch2/catch.hpp>

#include "tests/support/temp_dir.h"

namespace swapd::testing {
namespace {

BenchRow Row(const std::string& model, double decode_tps, const std::string& partner = "") {
  BenchRow row;
  row.model = model;
  row.mode = partner.empty() ? "solo" : "duo";
  row.partner = partner;
  row.config_hash = "h-" + model;
  row.runs = 3;
  row.decode_tps = decode_tps;
  row.prefill_tps = 10 * decode_tps;
  row.gates.push_back({"json-object", false, "not valid JSON at byte 0: x", "/tmp/out.txt"});
  row.finished_at = 1765000000;
  return row;
}

std::unique_ptr<BenchStore> OpenOrFail(const std::string& path) {
  auto store = BenchStore::Open(path);
  INFO(store.status().message());
  REQUIRE(store.ok());
  return std::move(store).value();
}

TEST_CASE("the bench store keeps rows and finds the previous run", "[unit][scoreboard][store]") {
  auto store = OpenOrFail(":memory:");
  auto first = store->Record(Row("a", 10), "host: x");
  REQUIRE(first.ok());
  REQUIRE(store->Record(Row("b", 5), "host: x").ok());
  REQUIRE(store->Record(Row("a", 20, "b"), "host: x").ok());  // a duo row is its own series
  auto second = store->Record(Row("a", 12), "host: y");
  REQUIRE(second.ok());
  CHECK(second.value() > first.value());

  auto previous = store->Previous(Row("a", 0), second.value());
  REQUIRE(previous.ok());
  REQUIRE(previous.value().has_value());
  const BenchStore::Stored& p = *previous.value();
  CHECK(p.id == first.value());
  CHECK(p.machine == "host: x");
  CHECK(p.row.decode_tps == 10);
  CHECK(p.row.prefill_tps == 100);
  CHECK(p.row.config_hash == "h-a");
  REQUIRE(p.row.gates.size() == 1);
  CHECK(p.row.gates[0].reason == "not valid JSON at byte 0: x");
  CHECK(p.row.gates[0].output_path == "/tmp/out.txt");

  auto newest = store->Previous(Row("a", 0), 0);  // any id: the newest
  REQUIRE(newest.ok());
  REQUIRE(newest.value().has_value());
  CHECK(newest.value()->id == second.value());
  CHECK(newest.value()->machine == "host: y");

  auto none = store->Previous(Row("a", 0), first.value());
  REQUIRE(none.ok());
  CHECK_FALSE(none.value().has_value());
  auto other = store->Previous(Row("c", 0), 0);
  REQUIRE(other.ok());
  CHECK_FALSE(other.value().has_value());
}

TEST_CASE("the scoreboard is the newest row of each model, mode and partner",
          "[unit][scoreboard][store]") {
  auto store = OpenOrFail(":memory:");
  REQUIRE(store->Record(Row("a", 1), "m").ok());
  REQUIRE(store->Record(Row("b", 2), "m").ok());
  REQUIRE(store->Record(Row("a", 3, "b"), "m").ok());
  REQUIRE(store->Record(Row("a", 4), "m").ok());
  auto latest = store->Latest(10);
  REQUIRE(latest.ok());
  const auto& rows = latest.value();
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].row.model == "a");  // newest first
  CHECK(rows[0].row.decode_tps == 4);
  CHECK(rows[1].row.partner == "b");
  CHECK(rows[1].row.mode == "duo");
  CHECK(rows[2].row.model == "b");
  auto two = store->Latest(2);
  REQUIRE(two.ok());
  CHECK(two.value().size() == 2);
  auto zero = store->Latest(0);
  REQUIRE(zero.ok());
  CHECK(zero.value().empty());
}

TEST_CASE("the bench store keeps a bounded number of rows per model", "[unit][scoreboard][store]") {
  auto store = OpenOrFail(":memory:");
  int64_t first_kept = 0;
  for (int i = 0; i < BenchStore::kRowsPerModel + 10; ++i) {
    auto id = store->Record(Row("a", i), "m");
    REQUIRE(id.ok());
    if (i == 10) first_kept = id.value();
  }
  REQUIRE(store->Record(Row("b", 1), "m").ok());
  // Walk back through a's rows: exactly kRowsPerModel are left, the newest ones.
  int count = 0;
  int64_t before = 0;
  int64_t oldest = 0;
  for (;;) {
    auto previous = store->Previous(Row("a", 0), before);
    REQUIRE(previous.ok());
    if (!previous.value()) break;
    ++count;
    oldest = before = previous.value()->id;
  }
  CHECK(count == BenchStore::kRowsPerModel);
  CHECK(oldest == first_kept);
  auto b = store->Previous(Row("b", 0), 0);
  REQUIRE(b.ok());
  CHECK(b.value().has_value());
}

TEST_CASE("the bench store's file survives reopening and shows another writer's rows",
          "[unit][scoreboard][store]") {
  TempDir tmp("swapd-bench-store");
  const std::string path = tmp.Path("state/swapd.db");  // the directory is created
  auto reader = OpenOrFail(path);
  {
    auto writer = OpenOrFail(path);
    REQUIRE(writer->Record(Row("a", 7), "host: z").ok());
  }
  // Another connection (in swapd: `swapd bench`, another process) wrote; nothing is cached.
  auto seen = reader->Latest(5);
  REQUIRE(seen.ok());
  REQUIRE(seen.value().size() == 1);
  CHECK(seen.value()[0].machine == "host: z");
  reader.reset();
  auto reopened = OpenOrFail(path);
  CHECK(reopened->path() == path);
  auto latest = reopened->Latest(5);
  REQUIRE(latest.ok());
  REQUIRE(latest.value().size() == 1);
  CHECK(latest.value()[0].row.decode_tps == 7);
}

TEST_CASE("a bench store that is not a database is an error", "[unit][scoreboard][store]") {
  TempDir tmp("swapd-bench-store");
  const std::string path = tmp.Write("swapd.db", std::string(4096, 'x'));
  auto store = BenchStore::Open(path);
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().message().starts_with("store " + path + ": "));
}

TEST_CASE("the bench store keeps a pair's cold and warm swaps apart", "[unit][scoreboard][store]") {
  auto store = OpenOrFail(":memory:");
  BenchRow cold = Row("big", 1, "small");
  cold.mode = "swap";
  cold.cache = "cold";
  BenchRow warm = cold;
  warm.cache = "warm";
  REQUIRE(store->Record(cold, "m").ok());
  REQUIRE(store->Record(warm, "m").ok());
  auto latest = store->Latest(10);
  REQUIRE(latest.ok());
  REQUIRE(latest.value().size() == 2);
  CHECK(latest.value()[0].row.cache == "warm");
  CHECK(latest.value()[0].row.mode == "swap");
  CHECK(latest.value()[1].row.cache == "cold");
  // The previous of a cold swap is the cold one before it, not the warm one.
  cold.decode_tps = 2;
  auto previous = store->Previous(cold, 0);
  REQUIRE(previous.ok());
  REQUIRE(previous.value().has_value());
  CHECK(previous.value()->row.cache == "cold");
}

}  // namespace
}  // namespace swapd::testing
