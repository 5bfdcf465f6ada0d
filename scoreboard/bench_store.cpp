#include "scoreboard/bench_store.h"

#include "base/json_text.h"

namespace swapd {
namespace {

constexpr const char* kBenchSchema =
    "CREATE TABLE IF NOT EXISTS swapd_bench_runs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " model TEXT NOT NULL, mode TEXT NOT NULL, partner TEXT NOT NULL,"
    " config_hash TEXT NOT NULL, finished_at INTEGER NOT NULL,"
    " machine TEXT NOT NULL, row_json TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS swapd_bench_runs_by_model"
    " ON swapd_bench_runs (model, mode, partner, id);";

// The row of a SELECT of (id, machine, row_json).
Result<BenchStore::Stored> ReadStored(const SqliteDb& db, const Statement& select) {
  BenchStore::Stored stored;
  stored.id = select.Get<int64_t>(0);
  stored.machine = select.Get<std::string>(1);
  const nlohmann::json json =
      nlohmann::json::parse(select.Get<std::string_view>(2), nullptr, false);
  auto row = BenchRowFromJson(json);
  if (json.is_discarded() || !row.ok()) {
    return Status::Error(
        ErrorCode::kInternal,
        "store " + db.path() + ": bench run " + std::to_string(stored.id) +
            " is not a bench row: " + (row.ok() ? "not JSON" : row.status().message()));
  }
  stored.row = std::move(row).value();
  return stored;
}

// The mode column: a swap row's cache (and the router it went through, for --compare-router) is
// part of its key ("swap/cold", "swap/warm/llama.cpp router"), so that a cold and a warm swap of
// the same pair are each other's neighbours, not each other's previous.
std::string KeyMode(const BenchRow& row) {
  std::string mode = row.cache.empty() ? row.mode : row.mode + "/" + row.cache;
  return row.via.empty() ? mode : mode + "/" + row.via;
}

}  // namespace

Result<std::unique_ptr<BenchStore>> BenchStore::Open(const std::string& path) {
  auto db = SqliteDb::Open(path, kBenchSchema);
  if (!db.ok()) return db.status();
  return std::unique_ptr<BenchStore>(new BenchStore(std::move(db).value()));
}

BenchStore::~BenchStore() = default;

Result<int64_t> BenchStore::Record(const BenchRow& row, const std::string& machine) {
  std::lock_guard lock(mu_);
  Statement insert(*db_, "insert",
                   "INSERT INTO swapd_bench_runs (model, mode, partner, config_hash, finished_at,"
                   " machine, row_json) VALUES (?, ?, ?, ?, ?, ?, ?)");
  const std::string mode = KeyMode(row);
  if (Status s = insert.Exec(row.model, mode, row.partner, row.config_hash, row.finished_at,
                             machine, JsonText(ToJson(row)));
      !s.ok()) {
    return s;
  }
  const int64_t id = db_->LastInsertId();
  Statement trim(*db_, "trim",
                 "DELETE FROM swapd_bench_runs WHERE model = ? AND mode = ? AND partner = ? AND"
                 " id NOT IN (SELECT id FROM swapd_bench_runs WHERE model = ? AND mode = ? AND"
                 " partner = ? ORDER BY id DESC LIMIT ?)");
  if (Status s =
          trim.Exec(row.model, mode, row.partner, row.model, mode, row.partner, kRowsPerModel);
      !s.ok()) {
    return s;
  }
  return id;
}

Result<std::optional<BenchStore::Stored>> BenchStore::Previous(const BenchRow& like,
                                                               int64_t before_id) {
  std::lock_guard lock(mu_);
  Statement select(*db_, "select",
                   "SELECT id, machine, row_json FROM swapd_bench_runs"
                   " WHERE model = ? AND mode = ? AND partner = ? AND (? = 0 OR id < ?)"
                   " ORDER BY id DESC LIMIT 1");
  select.Bind(like.model, KeyMode(like), like.partner, before_id, before_id);
  if (!select.Next()) {
    if (!select.status().ok()) return select.status();
    return std::optional<Stored>();
  }
  auto stored = ReadStored(*db_, select);
  if (!stored.ok()) return stored.status();
  return std::optional<Stored>(std::move(stored).value());
}

Result<std::vector<BenchStore::Stored>> BenchStore::Latest(int limit) {
  std::lock_guard lock(mu_);
  std::vector<Stored> out;
  if (limit <= 0) return out;
  // No cache: `swapd bench` writes rows from its own process, and each read sees its commits.
  Statement select(*db_, "select",
                   "SELECT id, machine, row_json FROM swapd_bench_runs WHERE id IN"
                   " (SELECT MAX(id) FROM swapd_bench_runs GROUP BY model, mode, partner)"
                   " ORDER BY id DESC LIMIT ?");
  select.Bind(limit);
  while (select.Next()) {
    auto stored = ReadStored(*db_, select);
    if (!stored.ok()) return stored.status();
    out.push_back(std::move(stored).value());
  }
  if (!select.status().ok()) return select.status();
  return out;
}

}  // namespace swapd
