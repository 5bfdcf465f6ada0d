#include "store/load_time_store.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

namespace swapd {
namespace {

constexpr const char* kLoadTimeSchema =
    "CREATE TABLE IF NOT EXISTS swapd_load_times ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " model TEXT NOT NULL, definition TEXT NOT NULL,"
    " duration_ms INTEGER NOT NULL, finished_at INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS swapd_load_times_by_model"
    " ON swapd_load_times (model, definition, id);";

}  // namespace

Result<std::unique_ptr<LoadTimeStore>> LoadTimeStore::Open(const std::string& path) {
  auto db = SqliteDb::Open(path, kLoadTimeSchema);
  if (!db.ok()) return db.status();
  return std::unique_ptr<LoadTimeStore>(new LoadTimeStore(std::move(db).value()));
}

LoadTimeStore::~LoadTimeStore() = default;

Status LoadTimeStore::Record(const std::string& model, const std::string& definition,
                             std::chrono::milliseconds took, int64_t finished_at) {
  std::lock_guard lock(mu_);
  Statement insert(*db_, "insert",
                   "INSERT INTO swapd_load_times (model, definition, duration_ms, finished_at)"
                   " VALUES (?, ?, ?, ?)");
  if (Status s = insert.Exec(model, definition, took.count(), finished_at); !s.ok()) return s;
  Statement trim(*db_, "trim",
                 "DELETE FROM swapd_load_times WHERE model = ? AND definition = ? AND id NOT IN"
                 " (SELECT id FROM swapd_load_times WHERE model = ? AND definition = ?"
                 " ORDER BY id DESC LIMIT ?)");
  return trim.Exec(model, definition, model, definition, kRowsPerModel);
}

Result<std::optional<std::chrono::milliseconds>> LoadTimeStore::Expected(
    const std::string& model, const std::string& definition) {
  std::lock_guard lock(mu_);
  Statement select(*db_, "select",
                   "SELECT duration_ms FROM swapd_load_times WHERE model = ? AND definition = ?"
                   " ORDER BY id DESC LIMIT ?");
  select.Bind(model, definition, kMedianOf);
  std::vector<int64_t> took;
  while (select.Next()) took.push_back(select.Get<int64_t>(0));
  if (!select.status().ok()) return select.status();
  if (took.empty()) return std::optional<std::chrono::milliseconds>();
  // The median: one slow load (a cold page cache) does not move the estimate much.
  std::sort(took.begin(), took.end());
  const size_t n = took.size();
  const int64_t median = n % 2 == 1 ? took[n / 2] : (took[n / 2 - 1] + took[n / 2]) / 2;
  return std::optional(std::chrono::milliseconds(median));
}

std::unique_ptr<LoadTimeStore> OpenLoadTimeStore(const std::string& path) {
  if (!path.empty()) {
    auto opened = LoadTimeStore::Open(path);
    if (opened.ok()) return std::move(opened).value();
    spdlog::warn("{}; load times are kept in memory until swapd stops", opened.status().message());
  }
  auto in_memory = LoadTimeStore::Open(":memory:");
  if (in_memory.ok()) return std::move(in_memory).value();
  spdlog::error("{}; swapd keeps no load times", in_memory.status().message());
  return nullptr;
}

}  // namespace swapd
