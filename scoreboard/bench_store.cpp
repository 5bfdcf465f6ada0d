#include "scoreboard/bench_store.h"

#include "base/json_text.h"

namespace swapd {
namespace {

constexpr const char* kSchema =
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
  stored.id = select.Int(0);
  stored.machine = select.Text(1);
  const nlohmann::json json = nlohmann::json::parse(select.Text(2), nullptr, false);
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

}  // namespace

Result<std::unique_ptr<BenchStore>> BenchStore::Open(const std::string& path) {
  auto db = SqliteDb::Open(path, kSchema);
  if (!db.ok()) return db.status();
  return std::unique_ptr<BenchStore>(new BenchStore(std::move(db).value()));
}

BenchStore::~BenchStore() = default;

Result<int64_t> BenchStore::Record(const BenchRow& row, const std::string& machine) {
  std::lock_guard lock(mu_);
  Statement insert(*db_,
                   "INSERT INTO swapd_bench_runs (model, mode, partner, config_hash, finished_at,"
                   " machine, row_json) VALUES (?, ?, ?, ?, ?, ?, ?)");
  if (!insert.ok()) return db_->Error("insert");
  insert.Bind(1, row.model);
  insert.Bind(2, row.mode);
  insert.Bind(3, row.partner);
  insert.Bind(4, row.config_hash);
  insert.Bind(5, row.finished_at);
  insert.Bind(6, machine);
  insert.Bind(7, JsonText(ToJson(row)));
  if (insert.Step() != SQLITE_DONE) return db_->Error("insert");
  const int64_t id = sqlite3_last_insert_rowid(db_->get());
  Statement trim(*db_,
                 "DELETE FROM swapd_bench_runs WHERE model = ? AND mode = ? AND partner = ? AND"
                 " id NOT IN (SELECT id FROM swapd_bench_runs WHERE model = ? AND mode = ? AND"
                 " partner = ? ORDER BY id DESC LIMIT ?)");
  if (!trim.ok()) return db_->Error("trim");
  for (int i : {0, 3}) {
    trim.Bind(i + 1, row.model);
    trim.Bind(i + 2, row.mode);
    trim.Bind(i + 3, row.partner);
  }
  trim.Bind(7, static_cast<int64_t>(kRowsPerModel));
  if (trim.Step() != SQLITE_DONE) return db_->Error("trim");
  return id;
}

Result<std::optional<BenchStore::Stored>> BenchStore::Previous(const BenchRow& like,
                                                               int64_t before_id) {
  std::lock_guard lock(mu_);
  Statement select(*db_,
                   "SELECT id, machine, row_json FROM swapd_bench_runs"
                   " WHERE model = ? AND mode = ? AND partner = ? AND (? = 0 OR id < ?)"
                   " ORDER BY id DESC LIMIT 1");
  if (!select.ok()) return db_->Error("select");
  select.Bind(1, like.model);
  select.Bind(2, like.mode);
  select.Bind(3, like.partner);
  select.Bind(4, before_id);
  select.Bind(5, before_id);
  const int step = select.Step();
  if (step == SQLITE_DONE) return std::optional<Stored>();
  if (step != SQLITE_ROW) return db_->Error("select");
  auto stored = ReadStored(*db_, select);
  if (!stored.ok()) return stored.status();
  return std::optional<Stored>(std::move(stored).value());
}

Result<std::vector<BenchStore::Stored>> BenchStore::Latest(int limit) {
  std::lock_guard lock(mu_);
  std::vector<Stored> out;
  if (limit <= 0) return out;
  // No cache: `swapd bench` writes rows from its own process, and each read sees its commits.
  Statement select(*db_,
                   "SELECT id, machine, row_json FROM swapd_bench_runs WHERE id IN"
                   " (SELECT MAX(id) FROM swapd_bench_runs GROUP BY model, mode, partner)"
                   " ORDER BY id DESC LIMIT ?");
  if (!select.ok()) return db_->Error("select");
  select.Bind(1, static_cast<int64_t>(limit));
  int step;
  while ((step = select.Step()) == SQLITE_ROW) {
    auto stored = ReadStored(*db_, select);
    if (!stored.ok()) return stored.status();
    out.push_back(std::move(stored).value());
  }
  if (step != SQLITE_DONE) return db_->Error("select");
  return out;
}

}  // namespace swapd
