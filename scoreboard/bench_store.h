// BenchStore: the results of `swapd bench`, kept in swapd's SQLite database (store.path, the same
// file as the activity history) so that `swapd bench --compare` can show the change against the
// previous run of the same model, and the dashboard can show the scoreboard (GET /api/bench).
// Table swapd_bench_runs: one row per BenchRow (its ToJson as text, plus the key columns model,
// mode, partner, config_hash, finished_at) and the machine's description; the newest
// kRowsPerModel kept per (model, mode, partner). A swap row's mode column is "swap/cold" or
// "swap/warm".
// Every failure is a Status. Thread safe (one mutex); calls block on disk I/O.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "scoreboard/bench_result.h"
#include "store/sqlite_db.h"

namespace swapd {

class BenchStore {
 public:
  static constexpr int kRowsPerModel = 50;

  struct Stored {
    int64_t id = 0;
    std::string machine;
    BenchRow row;
  };

  // Opens (creating it and its directory when missing) the database at `path`; ":memory:" for
  // one that lasts until the process ends.
  static Result<std::unique_ptr<BenchStore>> Open(const std::string& path);
  ~BenchStore();
  BenchStore(const BenchStore&) = delete;
  BenchStore& operator=(const BenchStore&) = delete;

  // Stores `row` as run on `machine` (MachineDescription()); returns its id.
  Result<int64_t> Record(const BenchRow& row, const std::string& machine);
  // The newest stored row with the same model, mode and partner as `like` and an id below
  // `before_id` (0: any id); unset when there is none.
  Result<std::optional<Stored>> Previous(const BenchRow& like, int64_t before_id);
  // The scoreboard: the newest row of each (model, mode, partner), newest first, at most `limit`.
  Result<std::vector<Stored>> Latest(int limit);

  const std::string& path() const { return db_->path(); }

 private:
  explicit BenchStore(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}

  std::mutex mu_;
  const std::unique_ptr<SqliteDb> db_;  // used under mu_
};

}  // namespace swapd
