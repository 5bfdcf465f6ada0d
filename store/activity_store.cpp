#include "store/activity_store.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>
#include <variant>

#include "base/json_text.h"

namespace swapd {
namespace {

// llama-swap's table and indexes (its first migration), so that either can read the other's.
constexpr const char* kSchema =
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

// A WHERE clause with its parameters, bound in order.
struct Where {
  std::string sql;  // "" or " WHERE ..."
  std::vector<std::variant<std::string, int64_t>> args;

  void And(const std::string& condition) { sql += (sql.empty() ? " WHERE " : " AND ") + condition; }
  int BindTo(Statement& s) const {
    int i = 1;
    for (const auto& arg : args) {
      if (const auto* text = std::get_if<std::string>(&arg)) {
        s.Bind(i++, *text);
      } else {
        s.Bind(i++, std::get<int64_t>(arg));
      }
    }
    return i;  // the next parameter's index
  }
};

Where WhereOf(const ActivityFilter& f) {
  Where w;
  if (!f.models.empty()) {
    std::string marks;
    for (const std::string& model : f.models) {
      marks += marks.empty() ? "?" : ", ?";
      w.args.emplace_back(model);
    }
    w.And("model_id IN (" + marks + ")");
  }
  auto bound = [&](bool set, const char* condition, int64_t value) {
    if (!set) return;
    w.And(condition);
    w.args.emplace_back(value);
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

ActivityEntry EntryOf(const Statement& s) {
  ActivityEntry e;
  e.id = s.Int(0);
  e.timestamp = s.Int(1);
  e.model = s.Text(2);
  e.req_path = s.Text(3);
  e.content_type = s.Text(4);
  e.status = static_cast<int>(s.Int(5));
  e.tokens.cache = s.Int(6);
  e.tokens.draft = s.Int(7);
  e.tokens.draft_accepted = s.Int(8);
  e.tokens.input = s.Int(9);
  e.tokens.output = s.Int(10);
  e.tokens.prompt_per_second = s.Real(11);
  e.tokens.tokens_per_second = s.Real(12);
  e.duration_ms = s.Int(13);
  e.error = s.Text(14);
  e.metadata = MetadataOf(s.Text(15));
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
  Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path, kSchema);
  if (!db.ok()) return db.status();
  return std::unique_ptr<ActivityStore>(new ActivityStore(std::move(db).value()));
}

ActivityStore::~ActivityStore() = default;

Result<std::vector<int64_t>> ActivityStore::Insert(const std::vector<ActivityEntry>& entries) {
  std::lock_guard lock(mu_);
  if (Status s = db_->Exec("BEGIN"); !s.ok()) return s;
  std::vector<int64_t> ids;
  Statement insert(*db_, std::string("INSERT INTO activity (") + kDataColumns +
                             ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  for (const ActivityEntry& e : entries) {
    if (!insert.ok()) break;
    sqlite3_reset(insert.get());
    insert.Bind(1, e.timestamp);
    insert.Bind(2, e.model);
    insert.Bind(3, e.req_path);
    insert.Bind(4, e.content_type);
    insert.Bind(5, static_cast<int64_t>(e.status));
    insert.Bind(6, e.tokens.cache);
    insert.Bind(7, e.tokens.draft);
    insert.Bind(8, e.tokens.draft_accepted);
    insert.Bind(9, e.tokens.input);
    insert.Bind(10, e.tokens.output);
    insert.Bind(11, e.tokens.prompt_per_second);
    insert.Bind(12, e.tokens.tokens_per_second);
    insert.Bind(13, e.duration_ms);
    insert.Bind(14, e.error);
    insert.Bind(15, MetadataText(e.metadata));
    if (insert.Step() != SQLITE_DONE) break;
    ids.push_back(sqlite3_last_insert_rowid(db_->get()));
  }
  if (ids.size() != entries.size()) {
    Status failed = db_->Error("recording requests");
    db_->Exec("ROLLBACK");
    return failed;
  }
  if (Status s = db_->Exec("COMMIT"); !s.ok()) {
    db_->Exec("ROLLBACK");
    return s;
  }
  return ids;
}

Status ActivityStore::Prune(int64_t max_rows) {
  std::lock_guard lock(mu_);
  // AUTOINCREMENT ids only grow: the newest max_rows rows are those above MAX(id) - max_rows.
  Statement prune(*db_, "DELETE FROM activity WHERE id <= (SELECT MAX(id) FROM activity) - ?");
  if (!prune.ok()) return db_->Error("pruning old requests");
  prune.Bind(1, max_rows);
  if (prune.Step() != SQLITE_DONE) return db_->Error("pruning old requests");
  return Status::Ok();
}

Result<ActivityPage> ActivityStore::List(const ActivityQuery& query) {
  std::lock_guard lock(mu_);
  const Where where = WhereOf(query.filter);
  ActivityPage page;
  page.page = std::max(query.page, 1);
  page.limit = std::clamp(query.limit, 1, 999);
  Statement count(*db_, "SELECT COUNT(*) FROM activity" + where.sql);
  if (!count.ok()) return db_->Error("counting requests");
  where.BindTo(count);
  if (count.Step() != SQLITE_ROW) return db_->Error("counting requests");
  page.total = count.Int(0);
  page.total_pages = (page.total + page.limit - 1) / page.limit;

  auto column = SortColumns().find(query.sort);
  const std::string order = query.ascending ? " ASC" : " DESC";
  std::string order_by = " ORDER BY id" + order;
  if (column != SortColumns().end() && column->second != "id") {
    order_by = " ORDER BY " + column->second + order + ", id" + order;  // stable pages
  }
  Statement rows(*db_, std::string("SELECT id, ") + kDataColumns + " FROM activity" + where.sql +
                           order_by + " LIMIT ? OFFSET ?");
  if (!rows.ok()) return db_->Error("listing requests");
  const int next = where.BindTo(rows);
  rows.Bind(next, static_cast<int64_t>(page.limit));
  rows.Bind(next + 1, static_cast<int64_t>(page.page - 1) * page.limit);
  int step;
  while ((step = rows.Step()) == SQLITE_ROW) page.data.push_back(EntryOf(rows));
  if (step != SQLITE_DONE) return db_->Error("listing requests");
  return page;
}

Result<ActivityStats> ActivityStore::Stats(const std::string& model) {
  std::lock_guard lock(mu_);
  ActivityFilter filter;
  if (!model.empty()) filter.models = {model};
  Where where = WhereOf(filter);
  Statement totals(
      *db_,
      "SELECT COUNT(*), COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0),"
      " COALESCE(SUM(MAX(cache_tokens, 0)), 0) FROM activity" +
          where.sql);
  if (!totals.ok()) return db_->Error("summing requests");
  where.BindTo(totals);
  if (totals.Step() != SQLITE_ROW) return db_->Error("summing requests");
  ActivityStats stats;
  stats.total_requests = totals.Int(0);
  stats.total_input_tokens = totals.Int(1);
  stats.total_output_tokens = totals.Int(2);
  stats.total_cache_tokens = totals.Int(3);

  // A speed of 0 was not reported: left out of its histogram.
  where.And("(prompt_per_second > 0 OR tokens_per_second > 0)");
  Statement speeds(*db_, "SELECT prompt_per_second, tokens_per_second FROM activity" + where.sql);
  if (!speeds.ok()) return db_->Error("reading speeds");
  where.BindTo(speeds);
  std::vector<double> prompt;
  std::vector<double> generation;
  int step;
  while ((step = speeds.Step()) == SQLITE_ROW) {
    if (speeds.Real(0) > 0) prompt.push_back(speeds.Real(0));
    if (speeds.Real(1) > 0) generation.push_back(speeds.Real(1));
  }
  if (step != SQLITE_DONE) return db_->Error("reading speeds");
  stats.prompt = HistogramOf(std::move(prompt));
  stats.generation = HistogramOf(std::move(generation));
  return stats;
}

}  // namespace swapd
