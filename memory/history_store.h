// HistoryStore: swapd's SQLite database (store.path): what each model definition was measured to
// hold, so that a restart does not forget what the memory budget learned. One row per recorded
// sample in table swapd_footprints (prefixed: the file may be llama-swap's own database, taken
// over with its config), keyed by model id and definition (ModelConfig::slot_key: a hash of its cmd
// and env), the last kRowsPerModel kept per key. WAL mode; a busy database is waited for briefly.
// Every failure is a Status: the caller goes on without history. Thread safe (one mutex); calls
// block on disk I/O, so they never run on a request's path.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backends/residency_policy.h"
#include "base/status.h"
#include "memory/memory_meter.h"
#include "store/sqlite_db.h"

namespace swapd {

struct FootprintRecord {
  std::string model;
  std::string definition;  // ModelConfig::slot_key
  int64_t at = 0;          // Unix seconds
  ProcessMemory process;
  std::map<int, int64_t> vram;  // GPU index -> bytes
  Footprint learned;            // what the budget counted after this sample
};

class HistoryStore {
 public:
  static constexpr int kRowsPerModel = 500;

  // Opens (creating it and its directory when missing) the database at `path`.
  static Result<std::unique_ptr<HistoryStore>> Open(const std::string& path);
  ~HistoryStore();
  HistoryStore(const HistoryStore&) = delete;
  HistoryStore& operator=(const HistoryStore&) = delete;

  Status Record(const FootprintRecord& record);
  // The latest learned footprint of every (model, definition) recorded.
  Result<std::map<std::pair<std::string, std::string>, Footprint>> LatestFootprints();
  // The last `limit` records of one model, newest first (any definition).
  Result<std::vector<FootprintRecord>> History(const std::string& model, int limit);

  const std::string& path() const { return db_->path(); }

 private:
  explicit HistoryStore(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}

  std::mutex mu_;
  const std::unique_ptr<SqliteDb> db_;  // used under mu_
};

}  // namespace swapd
