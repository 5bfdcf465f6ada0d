// LoadTimeStore: how long each model definition took to load (start to ready), kept in swapd's
// SQLite database (store.path, or one in memory when there is none) so that the first load after
// a restart already has an expected time. One row per successful load in table swapd_load_times,
// keyed by model id and definition (ModelConfig::slot_key: a hash of its cmd and env, so a
// changed command does not inherit the old times); the last kRowsPerModel kept per key.
// Every failure is a Status: the caller goes on without the history. Thread safe (one mutex);
// calls block on disk I/O, so they never run on a request's path or in the Router's events.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/status.h"
#include "store/sqlite_db.h"

namespace swapd {

class LoadTimeStore {
 public:
  static constexpr int kRowsPerModel = 20;
  // How many of the latest loads the expected time is the median of.
  static constexpr int kMedianOf = 5;

  // Opens (creating it and its directory when missing) the database at `path`; ":memory:" for
  // one that lasts until swapd stops.
  static Result<std::unique_ptr<LoadTimeStore>> Open(const std::string& path);
  ~LoadTimeStore();
  LoadTimeStore(const LoadTimeStore&) = delete;
  LoadTimeStore& operator=(const LoadTimeStore&) = delete;

  // `finished_at`: Unix seconds.
  Status Record(const std::string& model, const std::string& definition,
                std::chrono::milliseconds took, int64_t finished_at);
  // The median of the last kMedianOf loads of (model, definition); unset when there is none.
  Result<std::optional<std::chrono::milliseconds>> Expected(const std::string& model,
                                                            const std::string& definition);

  const std::string& path() const { return db_->path(); }

 private:
  explicit LoadTimeStore(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}

  std::mutex mu_;
  const std::unique_ptr<SqliteDb> db_;  // used under mu_
};

// The store at `path` (store.path), or, when there is none ("") or it cannot be opened (logged),
// one in memory. Null only when even that fails (logged).
std::unique_ptr<LoadTimeStore> OpenLoadTimeStore(const std::string& path);

}  // namespace swapd
