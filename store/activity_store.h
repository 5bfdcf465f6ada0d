// ActivityStore: one row per request that reached a model (or was refused on its way), in table
// `activity` of swapd's SQLite database, with llama-swap's columns: a database llama-swap wrote
// keeps its history when swapd takes over its config (store.path), and the reverse. Queries as
// llama-swap's /api/metrics/activity and /api/metrics/stats answer them. Every failure is a
// Status. Thread safe (one mutex); calls block on disk I/O: writes go through ActivityLog's
// thread, never a request's.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/sqlite_db.h"

namespace swapd {

struct ActivityTokens {
  int64_t cache = 0;           // prompt tokens reused from the cache
  int64_t draft = 0;           // speculative decoding: drafted
  int64_t draft_accepted = 0;  // and accepted
  int64_t input = 0;
  int64_t output = 0;
  double prompt_per_second = 0;  // 0: not reported
  double tokens_per_second = 0;
};

struct ActivityEntry {
  int64_t id = 0;         // given by the store
  int64_t timestamp = 0;  // Unix seconds (llama-swap's resolution)
  std::string model;
  std::string req_path;
  std::string content_type;
  int status = 0;
  ActivityTokens tokens;
  int64_t duration_ms = 0;
  std::string error;  // why swapd answered with an error; "" otherwise
  std::map<std::string, std::string> metadata;
};

// Each set field narrows; all are ANDed. Times in Unix seconds, bounds inclusive.
struct ActivityFilter {
  std::vector<std::string> models;
  std::optional<int64_t> start;
  std::optional<int64_t> end;
  int64_t min_id = 0;  // 0: unbounded
  int64_t max_id = 0;
};

struct ActivityQuery {
  ActivityFilter filter;
  int limit = 25;           // 1..999
  int page = 1;             // from 1
  std::string sort = "id";  // a key IsActivitySortKey accepts
  bool ascending = false;
};

struct ActivityPage {
  std::vector<ActivityEntry> data;
  int page = 1;
  int limit = 25;
  int64_t total = 0;
  int64_t total_pages = 0;
};

// Speeds (tokens/s) binned as llama-swap's dashboard draws them: 5 to 20 bins (Sturges' rule),
// equal widths from min to max; percentiles interpolated between the sorted values.
struct SpeedHistogram {
  std::vector<int64_t> bins;
  double min = 0;
  double max = 0;
  double bin_size = 0;  // 0 when every value is the same (one bin)
  double p50 = 0;
  double p95 = 0;
  double p99 = 0;
};

struct ActivityStats {
  int64_t total_requests = 0;
  int64_t total_input_tokens = 0;
  int64_t total_output_tokens = 0;
  int64_t total_cache_tokens = 0;
  std::optional<SpeedHistogram> prompt;  // none without a reported speed
  std::optional<SpeedHistogram> generation;
};

// The sort keys of /api/metrics/activity: id, time, model, req_path, resp_status_code,
// resp_content_type, cached, prompt, generated, drafted, prompt_speed, gen_speed, duration.
bool IsActivitySortKey(const std::string& key);

// nullopt for no values. Pure.
std::optional<SpeedHistogram> HistogramOf(std::vector<double> values);

class ActivityStore {
 public:
  // The database at `path`, or ":memory:" for one that is gone at exit.
  static Result<std::unique_ptr<ActivityStore>> Open(const std::string& path);
  ~ActivityStore();
  ActivityStore(const ActivityStore&) = delete;
  ActivityStore& operator=(const ActivityStore&) = delete;

  // Inserts the entries in one transaction; their ids, in order.
  Result<std::vector<int64_t>> Insert(const std::vector<ActivityEntry>& entries);
  // Keeps the newest `max_rows` rows.
  Status Prune(int64_t max_rows);
  Result<ActivityPage> List(const ActivityQuery& query);
  // Over every row, or one model's ("" for all).
  Result<ActivityStats> Stats(const std::string& model);

  const std::string& path() const { return db_->path(); }

 private:
  explicit ActivityStore(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}

  // The INSERT of `rows` rows, prepared once and kept. mu_ held.
  Statement& InsertOf(size_t rows);

  std::mutex mu_;
  const std::unique_ptr<SqliteDb> db_;  // used under mu_
  // Guarded by mu_; prepared on first use: the INSERTs of kRowsPerInsert rows and of one row.
  std::unique_ptr<Statement> insert_many_;
  std::unique_ptr<Statement> insert_one_;
};

}  // namespace swapd
