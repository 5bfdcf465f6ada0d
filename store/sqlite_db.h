// SqliteDb: one connection to swapd's SQLite database (store.path), as its stores use it: the
// file and its directory created when missing, WAL mode, a busy database waited for briefly, and
// every failure a Status naming the file and SQLite's message. Statement: a prepared statement,
// finalized at the end of its scope. Not synchronized: each store guards its connection.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"

namespace swapd {

class SqliteDb {
 public:
  // Opens (creating it and its directory when missing) the database at `path`; ":memory:" for
  // one that lives in memory. `schema` (statements) runs once it is open.
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path, const char* schema);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  sqlite3* get() const { return db_; }
  const std::string& path() const { return path_; }
  Status Exec(const char* sql);
  // "store <path>: <what>: <SQLite's message>".
  Status Error(const std::string& what) const;

 private:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* const db_;
  const std::string path_;
};

class Statement {
 public:
  Statement(const SqliteDb& db, const std::string& sql) {
    ok_ = sqlite3_prepare_v2(db.get(), sql.c_str(), -1, &s_, nullptr);
  }
  ~Statement() { sqlite3_finalize(s_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  bool ok() const { return ok_ == SQLITE_OK; }
  sqlite3_stmt* get() const { return s_; }
  void Bind(int i, const std::string& text) {
    sqlite3_bind_text(s_, i, text.c_str(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void Bind(int i, int64_t value) { sqlite3_bind_int64(s_, i, value); }
  void Bind(int i, double value) { sqlite3_bind_double(s_, i, value); }
  // SQLITE_ROW, SQLITE_DONE or an error.
  int Step() { return sqlite3_step(s_); }
  std::string Text(int column) const {
    const unsigned char* text = sqlite3_column_text(s_, column);
    return text == nullptr ? std::string() : reinterpret_cast<const char*>(text);
  }
  int64_t Int(int column) const { return sqlite3_column_int64(s_, column); }
  double Real(int column) const { return sqlite3_column_double(s_, column); }

 private:
  sqlite3_stmt* s_ = nullptr;
  int ok_ = SQLITE_ERROR;
};

}  // namespace swapd
