#include "store/sqlite_db.h"

#include <filesystem>

namespace swapd {

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path, const char* schema) {
  const bool in_memory = path == ":memory:";
  if (!in_memory) {
    std::error_code ec;
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) {
      return Status::Error(ErrorCode::kInternal, "store " + path + ": cannot create " +
                                                     parent.string() + ": " + ec.message());
    }
  }
  sqlite3* db = nullptr;
  const int opened = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<SqliteDb> store(new SqliteDb(db, path));
  if (opened != SQLITE_OK) return store->Error("cannot open it");
  sqlite3_busy_timeout(db, 1000);
  if (!in_memory) {
    for (const char* sql : {"PRAGMA journal_mode=WAL;", "PRAGMA synchronous=NORMAL;"}) {
      if (Status s = store->Exec(sql); !s.ok()) return s;
    }
  }
  if (Status s = store->Exec(schema); !s.ok()) return s;
  return store;
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

Status SqliteDb::Error(const std::string& what) const {
  const char* message = db_ == nullptr ? "out of memory" : sqlite3_errmsg(db_);
  return Status::Error(ErrorCode::kInternal, "store " + path_ + ": " + what + ": " + message);
}

Status SqliteDb::Exec(const char* sql) {
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return Error(sql);
  return Status::Ok();
}

}  // namespace swapd
