#include "memory/history_store.h"

#include <nlohmann/json.hpp>

namespace swapd {
namespace {

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS swapd_footprints ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " model TEXT NOT NULL, definition TEXT NOT NULL, at INTEGER NOT NULL,"
    " rss INTEGER NOT NULL, anon INTEGER NOT NULL, file INTEGER NOT NULL, shmem INTEGER NOT NULL,"
    " vram TEXT NOT NULL, learned_ram INTEGER NOT NULL, learned_vram TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS swapd_footprints_by_model"
    " ON swapd_footprints (model, definition, id);";

std::string VramText(const std::map<int, int64_t>& vram) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [gpu, bytes] : vram) j[std::to_string(gpu)] = bytes;
  return j.dump();
}

// A stored {"0": bytes} map; a value that does not parse reads as empty.
std::map<int, int64_t> VramOf(const std::string& text) {
  std::map<int, int64_t> vram;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return vram;
  for (const auto& [gpu, bytes] : j.items()) {
    if (!bytes.is_number_integer()) continue;
    try {
      vram[std::stoi(gpu)] = bytes.get<int64_t>();
    } catch (const std::exception&) {
      // not a GPU index: skipped
    }
  }
  return vram;
}

Footprint LearnedOf(int64_t ram, const std::string& vram_text) {
  Footprint f;
  f.ram = static_cast<uint64_t>(std::max<int64_t>(ram, 0));
  for (const auto& [gpu, bytes] : VramOf(vram_text)) {
    if (bytes > 0) f.vram[gpu] = static_cast<uint64_t>(bytes);
  }
  return f;
}

}  // namespace

Result<std::unique_ptr<HistoryStore>> HistoryStore::Open(const std::string& path) {
  Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path, kSchema);
  if (!db.ok()) return db.status();
  return std::unique_ptr<HistoryStore>(new HistoryStore(std::move(db).value()));
}

HistoryStore::~HistoryStore() = default;

Status HistoryStore::Record(const FootprintRecord& r) {
  std::lock_guard lock(mu_);
  Statement insert(*db_,
                   "INSERT INTO swapd_footprints (model, definition, at, rss, anon, file, shmem,"
                   " vram, learned_ram, learned_vram) VALUES (?,?,?,?,?,?,?,?,?,?)");
  if (!insert.ok()) return db_->Error("recording a footprint");
  insert.Bind(1, r.model);
  insert.Bind(2, r.definition);
  insert.Bind(3, r.at);
  insert.Bind(4, r.process.rss);
  insert.Bind(5, r.process.anon);
  insert.Bind(6, r.process.file);
  insert.Bind(7, r.process.shmem);
  insert.Bind(8, VramText(r.vram));
  insert.Bind(9, static_cast<int64_t>(r.learned.ram));
  std::map<int, int64_t> learned_vram;
  for (const auto& [gpu, bytes] : r.learned.vram) learned_vram[gpu] = static_cast<int64_t>(bytes);
  insert.Bind(10, VramText(learned_vram));
  if (insert.Step() != SQLITE_DONE) return db_->Error("recording a footprint");
  // Keep the last kRowsPerModel rows of this model and definition.
  Statement prune(*db_,
                  "DELETE FROM swapd_footprints WHERE model = ?1 AND definition = ?2 AND id <="
                  " (SELECT id FROM swapd_footprints WHERE model = ?1 AND definition = ?2"
                  " ORDER BY id DESC LIMIT 1 OFFSET ?3)");
  if (!prune.ok()) return db_->Error("pruning old footprints");
  prune.Bind(1, r.model);
  prune.Bind(2, r.definition);
  prune.Bind(3, static_cast<int64_t>(kRowsPerModel));
  if (prune.Step() != SQLITE_DONE) return db_->Error("pruning old footprints");
  return Status::Ok();
}

Result<std::map<std::pair<std::string, std::string>, Footprint>> HistoryStore::LatestFootprints() {
  std::lock_guard lock(mu_);
  Statement q(*db_,
              "SELECT model, definition, learned_ram, learned_vram FROM swapd_footprints"
              " WHERE id IN (SELECT MAX(id) FROM swapd_footprints GROUP BY model, definition)");
  if (!q.ok()) return db_->Error("reading footprints");
  std::map<std::pair<std::string, std::string>, Footprint> out;
  int step;
  while ((step = q.Step()) == SQLITE_ROW) {
    out[{q.Text(0), q.Text(1)}] = LearnedOf(q.Int(2), q.Text(3));
  }
  if (step != SQLITE_DONE) return db_->Error("reading footprints");
  return out;
}

Result<std::vector<FootprintRecord>> HistoryStore::History(const std::string& model, int limit) {
  std::lock_guard lock(mu_);
  Statement q(*db_,
              "SELECT definition, at, rss, anon, file, shmem, vram, learned_ram, learned_vram"
              " FROM swapd_footprints WHERE model = ? ORDER BY id DESC LIMIT ?");
  if (!q.ok()) return db_->Error("reading footprints");
  q.Bind(1, model);
  q.Bind(2, static_cast<int64_t>(limit));
  std::vector<FootprintRecord> out;
  int step;
  while ((step = q.Step()) == SQLITE_ROW) {
    FootprintRecord r;
    r.model = model;
    r.definition = q.Text(0);
    r.at = q.Int(1);
    r.process.rss = q.Int(2);
    r.process.anon = q.Int(3);
    r.process.file = q.Int(4);
    r.process.shmem = q.Int(5);
    r.vram = VramOf(q.Text(6));
    r.learned = LearnedOf(q.Int(7), q.Text(8));
    out.push_back(std::move(r));
  }
  if (step != SQLITE_DONE) return db_->Error("reading footprints");
  return out;
}

}  // namespace swapd
