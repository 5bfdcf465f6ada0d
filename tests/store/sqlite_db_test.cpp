// The row binder of store/sqlite_db.h on its own: every kind of value bound in one call and read
// back by type, vectors, temporaries, one statement run row after row, and failures as a Status
// naming the file, the statement and SQLite's message.
#include "store/sqlite_db.h"

#include <catch2/catch.hpp>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/temp_dir.h"

namespace swapd::testing {
namespace {

std::unique_ptr<SqliteDb> OpenOrFail(const std::string& path, const char* schema) {
  auto db = SqliteDb::Open(path, schema);
  INFO(db.status().message());
  REQUIRE(db.ok());
  return std::move(db).value();
}

TEST_CASE("Statement binds every kind of value in one call and reads each back by type",
          "[unit][store]") {
  auto db = OpenOrFail(":memory:", "CREATE TABLE t (i INTEGER, r REAL, s TEXT, n TEXT);");
  Statement insert(*db, "inserting", "INSERT INTO t (i, r, s, n) VALUES (?, ?, ?, ?)");
  const std::string text = "held text";
  CHECK(insert.Exec(7, 2.5, text, nullptr).ok());
  CHECK(insert
            .Exec(std::numeric_limits<int64_t>::max(), std::optional<double>(),
                  std::string_view("a view"), std::optional<std::string>("set"))
            .ok());
  // An empty view has no pointer, which SQLite would take for NULL: it binds "".
  CHECK(insert.Exec(int64_t{-1}, 0.0, "a literal", std::string_view()).ok());
  CHECK(db->LastInsertId() == 3);

  Statement rows(*db, "reading", "SELECT i, r, s, n FROM t ORDER BY rowid");
  REQUIRE(rows.Next());
  CHECK(rows.Get<int>(0) == 7);
  CHECK(rows.Get<double>(1) == 2.5);
  CHECK(rows.Get<std::string>(2) == "held text");
  CHECK(rows.Get<std::optional<std::string>>(3) == std::nullopt);
  CHECK(rows.Get<std::string>(3).empty());  // NULL reads as ""
  REQUIRE(rows.Next());
  CHECK(rows.Get<int64_t>(0) == std::numeric_limits<int64_t>::max());
  CHECK(rows.Get<std::optional<double>>(1) == std::nullopt);
  CHECK(rows.Get<double>(1) == 0);  // NULL reads as 0
  CHECK(rows.Get<std::string_view>(2) == "a view");
  CHECK(rows.Get<std::optional<std::string>>(3) == "set");
  REQUIRE(rows.Next());
  CHECK(rows.Get<int64_t>(0) == -1);
  CHECK(rows.Get<std::string>(2) == "a literal");
  CHECK(rows.Get<std::optional<std::string>>(3) == "");
  CHECK_FALSE(rows.Next());
  CHECK(rows.status().ok());
}

TEST_CASE("Statement::Bind: a vector binds one parameter per element; a temporary is copied",
          "[unit][store]") {
  auto db = OpenOrFail(":memory:", "CREATE TABLE t (s TEXT);");
  Statement insert(*db, "inserting", "INSERT INTO t (s) VALUES (?)");
  const std::string long_text(100, 'x');  // on the heap: a copy is not the same bytes
  for (const std::string& s : {std::string("a"), std::string("b"), std::string("c"), long_text}) {
    REQUIRE(insert.Exec(s).ok());
  }

  Statement some(*db, "choosing", "SELECT s FROM t WHERE s IN (?, ?) AND length(s) < ? ORDER BY s");
  const std::vector<std::string> wanted = {"c", "a"};
  REQUIRE(some.Bind(wanted, 10).ok());
  std::vector<std::string> found;
  while (some.Next()) found.push_back(some.Get<std::string>(0));
  CHECK(some.status().ok());
  CHECK(found == std::vector<std::string>{"a", "c"});

  // The temporary is gone when the rows are read; the statement kept its own copy.
  Statement one(*db, "finding", "SELECT count(*) FROM t WHERE s = ?");
  REQUIRE(one.Bind(std::string(100, 'x')).ok());
  REQUIRE(one.Next());
  CHECK(one.Get<int>(0) == 1);
  // Binding again starts the query over with the new values.
  REQUIRE(one.Bind("b").ok());
  REQUIRE(one.Next());
  CHECK(one.Get<int>(0) == 1);
  REQUIRE(one.Bind("none").ok());
  REQUIRE(one.Next());
  CHECK(one.Get<int>(0) == 0);
}

TEST_CASE("Statement::Exec runs one statement row after row, each with its own values",
          "[unit][store]") {
  auto db = OpenOrFail(":memory:", "CREATE TABLE t (i INTEGER, s TEXT);");
  Statement insert(*db, "inserting", "INSERT INTO t (i, s) VALUES (?, ?)");
  for (int i = 1; i <= 100; ++i) {
    // A temporary per row: Exec binds it without a copy, and it outlives the step.
    REQUIRE(insert.Exec(i, "row " + std::to_string(i)).ok());
    CHECK(db->LastInsertId() == i);
  }
  Statement sums(*db, "summing", "SELECT count(*), sum(i), count(DISTINCT s) FROM t");
  REQUIRE(sums.Next());
  CHECK(sums.Get<int>(0) == 100);
  CHECK(sums.Get<int64_t>(1) == 5050);
  CHECK(sums.Get<int>(2) == 100);
  Statement last(*db, "reading", "SELECT s FROM t WHERE i = ?");
  REQUIRE(last.Bind(100).ok());
  REQUIRE(last.Next());
  CHECK(last.Get<std::string>(0) == "row 100");
}

TEST_CASE("Statement failures name the file, the statement and SQLite's message, and stick",
          "[unit][store]") {
  TempDir tmp("swapd-sqlite");
  const std::string path = tmp.Path("swapd.db");
  auto db = OpenOrFail(path, "CREATE TABLE u (name TEXT NOT NULL);");
  const std::string prefix = "store " + path + ": ";

  SECTION("a statement that does not prepare") {
    Statement bad(*db, "reading nothing", "SELECT * FROM missing WHERE x = ?");
    CHECK(bad.status().message() == prefix + "reading nothing: no such table: missing");
    CHECK(bad.Bind(1).message() == bad.status().message());
    CHECK_FALSE(bad.Next());
    CHECK(bad.Exec(1).message() == bad.status().message());
  }
  SECTION("a step that fails, then every later call") {
    Statement insert(*db, "naming", "INSERT INTO u (name) VALUES (?)");
    const Status failed = insert.Exec(nullptr);
    CHECK(failed.code() == ErrorCode::kInternal);
    CHECK_THAT(failed.message(), Catch::StartsWith(prefix + "naming: NOT NULL constraint failed"));
    CHECK(insert.Exec("a name").message() == failed.message());
    Statement count(*db, "counting", "SELECT count(*) FROM u");
    REQUIRE(count.Next());
    CHECK(count.Get<int>(0) == 0);
  }
  SECTION("too few values, or too many") {
    Statement pair(*db, "pairing", "SELECT ?, ?");
    CHECK(pair.Bind(1).message() == prefix + "pairing: 1 values for 2 parameters");
    CHECK_FALSE(pair.Next());
    Statement other(*db, "pairing", "SELECT ?, ?");
    CHECK_THAT(other.Bind(1, 2, 3).message(),
               Catch::StartsWith(prefix + "pairing: ") && Catch::Contains("out of range"));
  }
}

}  // namespace
}  // namespace swapd::testing
