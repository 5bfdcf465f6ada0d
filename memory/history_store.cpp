#include "memory/history_store.h"

#include <nlohmann/json.hpp>

namespace swapd {
namespace {

constexpr const char* kFootprintSchema =
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
  Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path, kFootprintSchema);
  if (!db.ok()) return db.status();
  return std::unique_ptr<HistoryStore>(new HistoryStore(std::move(db).value()));
}

HistoryStore::~HistoryStore() = default;

Status HistoryStore::Record(const FootprintRecord& r) {
  std::lock_guard lock(mu_);
  std::map<int, int64_t> learned_vram;
  for (const auto& [gpu, bytes] : r.learned.vram) learned_vram[gpu] = static_cast<int64_t>(bytes);
  Statement insert(*db_, "recording a footprint",
                   "INSERT INTO swapd_footprints (model, definition, at, rss, anon, file, shmem,"
                   " vram, learned_ram, learned_vram) VALUES (?,?,?,?,?,?,?,?,?,?)");
  if (Status s = insert.Exec(r.model, r.definition, r.at, r.process.rss, r.process.anon,
                             r.process.file, r.process.shmem, VramText(r.vram),
                             static_cast<int64_t>(r.learned.ram), VramText(learned_vram));
      !s.ok()) {
    return s;
  }
  // Keep the last kRowsPerModel rows of this model and definition.
  Statement prune(*db_, "pruning old footprints",
                  "DELETE FROM swapd_footprints WHERE model = ?1 AND definition = ?2 AND id <="
                  " (SELECT id FROM swapd_footprints WHERE model = ?1 AND definition = ?2"
                  " ORDER BY id DESC LIMIT 1 OFFSET ?3)");
  return prune.Exec(r.model, r.definition, kRowsPerModel);
}

Result<std::map<std::pair<std::string, std::string>, Footprint>> HistoryStore::LatestFootprints() {
  std::lock_guard lock(mu_);
  Statement q(*db_, "reading footprints",
              "SELECT model, definition, learned_ram, learned_vram FROM swapd_footprints"
              " WHERE id IN (SELECT MAX(id) FROM swapd_footprints GROUP BY model, definition)");
  std::map<std::pair<std::string, std::string>, Footprint> out;
  while (q.Next()) {
    out[{q.Get<std::string>(0), q.Get<std::string>(1)}] =
        LearnedOf(q.Get<int64_t>(2), q.Get<std::string>(3));
  }
  if (!q.status().ok()) return q.status();
  return out;
}

Result<std::vector<FootprintRecord>> HistoryStore::History(const std::string& model, int limit) {
  std::lock_guard lock(mu_);
  Statement q(*db_, "reading footprints",
              "SELECT definition, at, rss, anon, file, shmem, vram, learned_ram, learned_vram"
              " FROM swapd_footprints WHERE model = ? ORDER BY id DESC LIMIT ?");
  q.Bind(model, limit);
  std::vector<FootprintRecord> out;
  while (q.Next()) {
    FootprintRecord r;
    r.model = model;
    r.definition = q.Get<std::string>(0);
    r.at = q.Get<int64_t>(1);
    r.process.rss = q.Get<int64_t>(2);
    r.process.anon = q.Get<int64_t>(3);
    r.process.file = q.Get<int64_t>(4);
    r.process.shmem = q.Get<int64_t>(5);
    r.vram = VramOf(q.Get<std::string>(6));
    r.learned = LearnedOf(q.Get<int64_t>(7), q.Get<std::string>(8));
    out.push_back(std::move(r));
  }
  if (!q.status().ok()) return q.status();
  return out;
}

}  // namespace swapd
