// SqliteDb: one connection to swapd's SQLite database (store.path), as its stores use it: the
// file and its directory created when missing, WAL mode, a busy database waited for briefly, and
// every failure a Status naming the file and SQLite's message. Statement: a prepared statement
// and its row binder, so that a store states a query and its values once: Bind or Exec take every
// parameter in one call (Add binds a statement of many rows row by row), Next and Get<T> read the
// rows by type; its first failure sticks (later calls do nothing) and is its status(). Finalized at
// the end of its scope. Only sqlite_db.cpp includes SQLite. Not synchronized: each store guards its
// connection and uses its statements under that guard.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "base/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace swapd {
namespace sqlite_internal {
template <typename T>
constexpr bool kIsOptional = false;
template <typename T>
constexpr bool kIsOptional<std::optional<T>> = true;
template <typename T>
constexpr bool kIsVector = false;
template <typename T>
constexpr bool kIsVector<std::vector<T>> = true;
}  // namespace sqlite_internal

class SqliteDb {
 public:
  // Opens (creating it and its directory when missing) the database at `path`; ":memory:" for
  // one that lives in memory. `schema` (statements) runs once it is open.
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path, const char* schema);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  const std::string& path() const { return path_; }
  // Runs `sql` (one or more statements, no parameters); a failure names `sql`.
  Status Exec(const char* sql);
  // "store <path>: <what>: <SQLite's message>".
  Status Error(const std::string& what) const;
  // The rowid of this connection's latest INSERT.
  int64_t LastInsertId() const;

 private:
  friend class Statement;
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* const db_;
  const std::string path_;
};

class Statement {
 public:
  // Prepares `sql` on `db`, which must outlive it. `what` (a literal) names it in errors:
  // "store <path>: <what>: <SQLite's message>".
  Statement(const SqliteDb& db, const char* what, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Resets the statement and binds `values` to its parameters in order, one each: an integer,
  // double, text (std::string, std::string_view, a literal), std::optional<T> or nullptr (unset:
  // NULL); a std::vector of those binds one parameter per element. Every
  // parameter must get a value. Text is not copied: what the caller holds must outlive the rows
  // read; a temporary (an rvalue argument) is copied.
  template <typename... Values>
  Status Bind(Values&&... values) {
    if (Reset()) {
      int index = 0;
      (BindValue(index, values, !std::is_lvalue_reference_v<Values>), ...);
      Bound(index);
    }
    return status_;
  }
  // Binds `values` as Bind does and runs a statement without rows to its end. Text is never
  // copied: every value outlives the call, and the statement lets go of them before it returns.
  template <typename... Values>
  Status Exec(const Values&... values) {
    Add(values...);
    return RunAdded();
  }
  // A statement of many rows (INSERT ... VALUES (?,?), (?,?)) binds each row's values with one
  // Add, in order, then RunAdded runs it as Exec does (every parameter bound, text not copied).
  template <typename... Values>
  void Add(const Values&... values) {
    if (added_ == 0 && !Reset()) return;
    (BindValue(added_, values, false), ...);
  }
  Status RunAdded() {
    if (Bound(added_)) Run();
    added_ = 0;
    return status_;
  }
  // Steps to the next row: false at the end (a call after that runs the query again) or after a
  // failure (status() tells).
  bool Next();
  // Column `column` (from 0) of the current row, as int64_t, int, double, std::string,
  // std::string_view (valid until the next step) or std::optional<T> (NULL: unset). NULL reads
  // as 0 or "".
  template <typename T>
  T Get(int column) const {
    if constexpr (sqlite_internal::kIsOptional<T>) {
      if (ColumnIsNull(column)) return std::nullopt;
      return Get<typename T::value_type>(column);
    } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, int>) {
      return static_cast<T>(ColumnInt(column));
    } else if constexpr (std::is_same_v<T, double>) {
      return ColumnReal(column);
    } else if constexpr (std::is_same_v<T, std::string_view> || std::is_same_v<T, std::string>) {
      return T(ColumnText(column));
    } else {
      static_assert(sizeof(T) == 0, "Get: int64_t, int, double, text or an optional of one");
    }
  }
  const Status& status() const { return status_; }

 private:
  template <typename T>
  void BindValue(int& index, const T& value, bool copy_text) {
    if (!status_.ok()) return;
    if constexpr (std::is_same_v<T, std::nullptr_t> || std::is_same_v<T, std::nullopt_t>) {
      BindNull(++index);
    } else if constexpr (sqlite_internal::kIsOptional<T>) {
      if (value) {
        BindValue(index, *value, copy_text);
      } else {
        BindNull(++index);
      }
    } else if constexpr (sqlite_internal::kIsVector<T>) {
      for (const auto& v : value) BindValue(index, v, copy_text);
    } else if constexpr (std::is_floating_point_v<T>) {
      BindReal(++index, value);
    } else if constexpr (std::is_integral_v<T>) {
      static_assert(std::is_signed_v<T> || sizeof(T) < 8, "an unsigned 64-bit value may wrap");
      BindInt(++index, value);
    } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
      BindText(++index, value, copy_text);
    } else {
      static_assert(sizeof(T) == 0, "Bind: a number, text, optional or vector");
    }
  }
  // Each records its failure in status_; those returning bool return status_.ok().
  bool Reset();
  void BindNull(int index);
  void BindInt(int index, int64_t value);
  void BindReal(int index, double value);
  void BindText(int index, std::string_view text, bool copy);
  bool Bound(int count);  // `count` values for the statement's parameters
  int added_ = 0;         // parameters bound by Add since the statement last ran
  void Run();
  void Fail(int code);
  bool ColumnIsNull(int column) const;
  int64_t ColumnInt(int column) const;
  double ColumnReal(int column) const;
  std::string_view ColumnText(int column) const;

  const SqliteDb& db_;
  const char* const what_;
  sqlite3_stmt* s_ = nullptr;
  Status status_;
};

}  // namespace swapd
