#include "store/sqlite_db.h"

#include <sqlite3.h>

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

int64_t SqliteDb::LastInsertId() const { return sqlite3_last_insert_rowid(db_); }

Statement::Statement(const SqliteDb& db, const char* what, std::string_view sql)
    : db_(db), what_(what) {
  Fail(sqlite3_prepare_v2(db.db_, sql.data(), static_cast<int>(sql.size()), &s_, nullptr));
}

Statement::~Statement() { sqlite3_finalize(s_); }

bool Statement::Next() {
  if (!status_.ok()) return false;
  const int step = sqlite3_step(s_);
  if (step == SQLITE_ROW) return true;
  if (step != SQLITE_DONE) Fail(step);
  return false;
}

bool Statement::Reset() {
  if (status_.ok()) sqlite3_reset(s_);
  return status_.ok();
}

void Statement::BindNull(int index) { Fail(sqlite3_bind_null(s_, index)); }

void Statement::BindInt(int index, int64_t value) { Fail(sqlite3_bind_int64(s_, index, value)); }

void Statement::BindReal(int index, double value) { Fail(sqlite3_bind_double(s_, index, value)); }

void Statement::BindText(int index, std::string_view text, bool copy) {
  // A null pointer would bind NULL: an empty view binds "".
  Fail(sqlite3_bind_text64(s_, index, text.data() == nullptr ? "" : text.data(), text.size(),
                           copy ? SQLITE_TRANSIENT : SQLITE_STATIC, SQLITE_UTF8));
}

bool Statement::Bound(int count) {
  const int parameters = sqlite3_bind_parameter_count(s_);
  if (status_.ok() && count != parameters) {
    status_ = Status::Error(ErrorCode::kInternal, "store " + db_.path() + ": " + what_ + ": " +
                                                      std::to_string(count) + " values for " +
                                                      std::to_string(parameters) + " parameters");
  }
  return status_.ok();
}

void Statement::Run() {
  const int step = sqlite3_step(s_);
  if (step != SQLITE_DONE) Fail(step);
  // Exec's values may not outlive it: let go of them.
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
}

void Statement::Fail(int code) {
  if (code != SQLITE_OK && status_.ok()) status_ = db_.Error(what_);
}

bool Statement::ColumnIsNull(int column) const {
  return sqlite3_column_type(s_, column) == SQLITE_NULL;
}

int64_t Statement::ColumnInt(int column) const { return sqlite3_column_int64(s_, column); }

double Statement::ColumnReal(int column) const { return sqlite3_column_double(s_, column); }

std::string_view Statement::ColumnText(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(s_, column));
  if (text == nullptr) return {};
  return {text, static_cast<size_t>(sqlite3_column_bytes(s_, column))};
}

}  // namespace swapd
