#include "store/activity_store.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

#include "base/json_text.h"

namespace swapd {
namespace {

// llama-swap's table and indexes (its first migration), so that either can read the other's.
constexpr const char* kActivitySchema =
    "CREATE TABLE IF NOT EXISTS activity ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " ts_created INTEGER NOT NULL,"
    " model_id TEXT NOT NULL,"
    " req_path TEXT NOT NULL DEFAULT '',"
    " resp_content_type TEXT NOT NULL DEFAULT '',"
    " resp_status_code INTEGER NOT NULL DEFAULT 0,"
    " cache_tokens INTEGER NOT NULL DEFAULT 0,"
    " draft_tokens INTEGER NOT NULL DEFAULT 0,"
    " draft_acc_tokens INTEGER NOT NULL DEFAULT 0,"
    " input_tokens INTEGER NOT NULL DEFAULT 0,"
    " output_tokens INTEGER NOT NULL DEFAULT 0,"
    " prompt_per_second REAL NOT NULL DEFAULT 0,"
    " tokens_per_second REAL NOT NULL DEFAULT 0,"
    " duration_ms INTEGER NOT NULL DEFAULT 0,"
    " error_msg TEXT NOT NULL DEFAULT '',"
    " metadata_json TEXT NOT NULL DEFAULT '');"
    "CREATE INDEX IF NOT EXISTS idx_activity_created_id ON activity (ts_created DESC, id DESC);"
    "CREATE INDEX IF NOT EXISTS idx_activity_model_created_id"
    " ON activity (model_id, ts_created DESC, id DESC);";

// The parameters of one row of kDataColumns, and how many rows an INSERT takes (15 values each:
// below SQLite's oldest limit of 999 parameters).
constexpr const char* kRowValues = "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
constexpr size_t kRowsPerInsert = 64;

// Every column but id, in the order EntryOf reads them after it.
constexpr const char* kDataColumns =
    "ts_created, model_id, req_path, resp_content_type, resp_status_code, cache_tokens,"
    " draft_tokens, draft_acc_tokens, input_tokens, output_tokens, prompt_per_second,"
    " tokens_per_second, duration_ms, error_msg, metadata_json";

// API sort key -> column. A whitelist: what a client sends never reaches the SQL text.
const std::map<std::string, std::string>& SortColumns() {
  static const std::map<std::string, std::string> columns = {
      {"id", "id"},
      {"time", "ts_created"},
      {"model", "model_id"},
      {"req_path", "req_path"},
      {"resp_status_code", "resp_status_code"},
      {"resp_content_type", "resp_content_type"},
      {"cached", "cache_tokens"},
      {"prompt", "input_tokens"},
      {"generated", "output_tokens"},
      {"drafted", "draft_tokens"},
      {"prompt_speed", "prompt_per_second"},
      {"gen_speed", "tokens_per_second"},
      {"duration", "duration_ms"}};
  return columns;
}

// A WHERE clause with its parameters: the models' first, then the bounds'.
struct Where {
  std::string sql;  // "" or " WHERE ..."
  std::vector<std::string> models;
  std::vector<int64_t> bounds;

  void And(const std::string& condition) { sql += (sql.empty() ? " WHERE " : " AND ") + condition; }
};

Where WhereOf(const ActivityFilter& f) {
  Where w;
  if (!f.models.empty()) {
    std::string marks;
    for (const std::string& model : f.models) {
      marks += marks.empty() ? "?" : ", ?";
      w.models.push_back(model);
    }
    w.And("model_id IN (" + marks + ")");
  }
  auto bound = [&](bool set, const char* condition, int64_t value) {
    if (!set) return;
    w.And(condition);
    w.bounds.push_back(value);
  };
  bound(f.start.has_value(), "ts_created >= ?", f.start.value_or(0));
  bound(f.end.has_value(), "ts_created <= ?", f.end.value_or(0));
  bound(f.min_id > 0, "id >= ?", f.min_id);
  bound(f.max_id > 0, "id <= ?", f.max_id);
  return w;
}

std::string MetadataText(const std::map<std::string, std::string>& metadata) {
  if (metadata.empty()) return "";
  return JsonText(nlohmann::json(metadata));
}

std::map<std::string, std::string> MetadataOf(const std::string& text) {
  std::map<std::string, std::string> out;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return out;
  for (const auto& [key, value] : j.items()) {
    if (value.is_string()) out[key] = value.get<std::string>();
  }
  return out;
}

ActivityEntry EntryOf(const Statement& row) {
  ActivityEntry e;
  e.id = row.Get<int64_t>(0);
  e.timestamp = row.Get<int64_t>(1);
  e.model = row.Get<std::string>(2);
  e.req_path = row.Get<std::string>(3);
  e.content_type = row.Get<std::string>(4);
  e.status = row.Get<int>(5);
  e.tokens.cache = row.Get<int64_t>(6);
  e.tokens.draft = row.Get<int64_t>(7);
  e.tokens.draft_accepted = row.Get<int64_t>(8);
  e.tokens.input = row.Get<int64_t>(9);
  e.tokens.output = row.Get<int64_t>(10);
  e.tokens.prompt_per_second = row.Get<double>(11);
  e.tokens.tokens_per_second = row.Get<double>(12);
  e.duration_ms = row.Get<int64_t>(13);
  e.error = row.Get<std::string>(14);
  e.metadata = MetadataOf(row.Get<std::string>(15));
  return e;
}

// The value at percentile `p` of sorted values, interpolated between neighbours.
double Percentile(const std::vector<double>& sorted, double p) {
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lower = static_cast<size_t>(std::floor(rank));
  const size_t upper = static_cast<size_t>(std::ceil(rank));
  return sorted[lower] + (rank - static_cast<double>(lower)) * (sorted[upper] - sorted[lower]);
}

}  // namespace

bool IsActivitySortKey(const std::string& key) { return SortColumns().count(key) != 0; }

std::optional<SpeedHistogram> HistogramOf(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  SpeedHistogram h;
  h.min = values.front();
  h.max = values.back();
  h.p50 = Percentile(values, 50);
  h.p95 = Percentile(values, 95);
  h.p99 = Percentile(values, 99);
  if (h.min == h.max) {
    h.bins = {static_cast<int64_t>(values.size())};
    return h;
  }
  const int sturges =
      static_cast<int>(std::ceil(std::log2(static_cast<double>(values.size())))) + 1;
  const int count = std::clamp(sturges, 5, 20);
  h.bin_size = (h.max - h.min) / count;
  h.bins.assign(static_cast<size_t>(count), 0);
  for (double v : values) {
    const int bin = std::min(static_cast<int>(std::floor((v - h.min) / h.bin_size)), count - 1);
    ++h.bins[static_cast<size_t>(bin)];
  }
  return h;
}

Result<std::unique_ptr<ActivityStore>> ActivityStore::Open(const std::string& path) {
  Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path, kActivitySchema);
  if (!db.ok()) return db.status();
  return std::unique_ptr<ActivityStore>(new ActivityStore(std::move(db).value()));
}

ActivityStore::~ActivityStore() = default;

Statement& ActivityStore::InsertOf(size_t rows) {
  std::unique_ptr<Statement>& kept = rows == 1 ? insert_one_ : insert_many_;
  if (!kept) {
    std::string sql =
        std::string("INSERT INTO activity (") + kDataColumns + ") VALUES " + kRowValues;
    for (size_t i = 1; i < rows; ++i) sql += std::string(",") + kRowValues;
    kept = std::make_unique<Statement>(*db_, "recording requests", sql);
  }
  return *kept;
}

Result<std::vector<int64_t>> ActivityStore::Insert(const std::vector<ActivityEntry>& entries) {
  std::lock_guard lock(mu_);
  if (Status s = db_->Exec("BEGIN"); !s.ok()) return s;
  // A busy server's rows go kRowsPerInsert to a statement: each statement opens the table and its
  // two indexes and reads and writes the AUTOINCREMENT counter once, where a statement per row did
  // it per row (measured with this schema: 2.2 us a row, against 2.8-3.7); the rest go one by one.
  // AUTOINCREMENT gives each new row the largest id ever used plus one, so the rows of one
  // statement have consecutive ids, ending at the last one inserted.
  std::vector<int64_t> ids;
  ids.reserve(entries.size());
  Status failed = Status::Ok();
  for (size_t at = 0; at < entries.size() && failed.ok();) {
    const size_t rows = entries.size() - at >= kRowsPerInsert ? kRowsPerInsert : 1;
    Statement& insert = InsertOf(rows);
    // Text is bound without a copy: the metadata texts live until the statement ran.
    std::vector<std::string> metadata;
    metadata.reserve(rows);
    for (size_t i = at; i < at + rows; ++i) {
      const ActivityEntry& e = entries[i];
      const ActivityTokens& t = e.tokens;
      insert.Add(e.timestamp, e.model, e.req_path, e.content_type, e.status, t.cache, t.draft,
                 t.draft_accepted, t.input, t.output, t.prompt_per_second, t.tokens_per_second,
                 e.duration_ms, e.error, metadata.emplace_back(MetadataText(e.metadata)));
    }
    failed = insert.RunAdded();
    const int64_t last = db_->LastInsertId();
    for (size_t i = 0; i < rows; ++i) ids.push_back(last - static_cast<int64_t>(rows - 1 - i));
    at += rows;
  }
  if (failed.ok()) failed = db_->Exec("COMMIT");
  if (!failed.ok()) {
    db_->Exec("ROLLBACK");
    // A statement's failure sticks: the next write prepares them again.
    insert_many_.reset();
    insert_one_.reset();
    return failed;
  }
  return ids;
}

Status ActivityStore::Prune(int64_t max_rows) {
  std::lock_guard lock(mu_);
  // AUTOINCREMENT ids only grow: the newest max_rows rows are those above MAX(id) - max_rows.
  return Statement(*db_, "pruning old requests",
                   "DELETE FROM activity WHERE id <= (SELECT MAX(id) FROM activity) - ?")
      .Exec(max_rows);
}

Result<ActivityPage> ActivityStore::List(const ActivityQuery& query) {
  std::lock_guard lock(mu_);
  const Where where = WhereOf(query.filter);
  ActivityPage page;
  page.page = std::max(query.page, 1);
  page.limit = std::clamp(query.limit, 1, 999);
  Statement count(*db_, "counting requests", "SELECT COUNT(*) FROM activity" + where.sql);
  count.Bind(where.models, where.bounds);
  if (!count.Next()) {  // COUNT(*) always has its row
    return count.status().ok() ? db_->Error("counting requests") : count.status();
  }
  page.total = count.Get<int64_t>(0);
  page.total_pages = (page.total + page.limit - 1) / page.limit;

  auto column = SortColumns().find(query.sort);
  const std::string order = query.ascending ? " ASC" : " DESC";
  std::string order_by = " ORDER BY id" + order;
  if (column != SortColumns().end() && column->second != "id") {
    order_by = " ORDER BY " + column->second + order + ", id" + order;  // stable pages
  }
  Statement rows(*db_, "listing requests",
                 std::string("SELECT id, ") + kDataColumns + " FROM activity" + where.sql +
                     order_by + " LIMIT ? OFFSET ?");
  rows.Bind(where.models, where.bounds, page.limit,
            static_cast<int64_t>(page.page - 1) * page.limit);
  while (rows.Next()) page.data.push_back(EntryOf(rows));
  if (!rows.status().ok()) return rows.status();
  return page;
}

Result<ActivityStats> ActivityStore::Stats(const std::string& model) {
  std::lock_guard lock(mu_);
  ActivityFilter filter;
  if (!model.empty()) filter.models = {model};
  Where where = WhereOf(filter);
  Statement totals(
      *db_, "summing requests",
      "SELECT COUNT(*), COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0),"
      " COALESCE(SUM(MAX(cache_tokens, 0)), 0) FROM activity" +
          where.sql);
  totals.Bind(where.models, where.bounds);
  if (!totals.Next()) {  // as COUNT(*) always has its row
    return totals.status().ok() ? db_->Error("summing requests") : totals.status();
  }
  ActivityStats stats;
  stats.total_requests = totals.Get<int64_t>(0);
  stats.total_input_tokens = totals.Get<int64_t>(1);
  stats.total_output_tokens = totals.Get<int64_t>(2);
  stats.total_cache_tokens = totals.Get<int64_t>(3);

  // A speed of 0 was not reported: left out of its histogram.
  where.And("(prompt_per_second > 0 OR tokens_per_second > 0)");
  Statement speeds(*db_, "reading speeds",
                   "SELECT prompt_per_second, tokens_per_second FROM activity" + where.sql);
  speeds.Bind(where.models, where.bounds);
  std::vector<double> prompt;
  std::vector<double> generation;
  while (speeds.Next()) {
    if (speeds.Get<double>(0) > 0) prompt.push_back(speeds.Get<double>(0));
    if (speeds.Get<double>(1) > 0) generation.push_back(speeds.Get<double>(1));
  }
  if (!speeds.status().ok()) return speeds.status();
  stats.prompt = HistogramOf(std::move(prompt));
  stats.generation = HistogramOf(std::move(generation));
  return stats;
}

}  // namespace swapd
