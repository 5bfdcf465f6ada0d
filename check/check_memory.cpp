#include "check/check_memory.h"

#include <cstdio>

#include <ctime>
#include <filesystem>
#include <optional>

#include "config/memory.h"
#include "memory/history_store.h"
#include "memory/memory_meter.h"

namespace swapd {
namespace {

nlohmann::json AmountJson(const MemoryAmount& a) {
  nlohmann::json vram = nlohmann::json::object();
  for (const auto& [gpu, bytes] : a.vram) vram[std::to_string(gpu)] = bytes;
  return {{"ram", a.ram ? nlohmann::json(*a.ram) : nlohmann::json(nullptr)}, {"vram", vram}};
}

// "2s", "0.5s".
std::string Seconds(std::chrono::milliseconds ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%gs", static_cast<double>(ms.count()) / 1000.0);
  return text;
}

bool UsesMemoryKeys(const Config& c) {
  if (c.memory.HasBudget()) return true;
  for (const auto& [id, m] : c.models) {
    if (!m.memory.empty() || m.keep_page_cache || !m.swappable || m.min_residency.count() > 0 ||
        m.prefetch) {
      return true;
    }
  }
  return false;
}

// The newest record of this model definition in the history store; nullopt when there is none
// (or no store file: `swapd check` creates nothing).
std::optional<FootprintRecord> Learned(const ModelConfig& m, const Config& c) {
  std::error_code ec;
  if (c.store_path.empty() || !std::filesystem::exists(c.store_path, ec)) return std::nullopt;
  auto store = HistoryStore::Open(c.store_path);
  if (!store.ok()) return std::nullopt;
  auto history = store.value()->History(m.id, HistoryStore::kRowsPerModel);
  if (!history.ok()) return std::nullopt;
  for (FootprintRecord& r : history.value()) {
    if (r.definition == m.slot_key) return std::move(r);
  }
  return std::nullopt;
}

std::string Date(int64_t unix_seconds) {
  const std::time_t t = unix_seconds;
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", &utc);
  return text;
}

MemoryAmount AsAmount(const Footprint& f) {
  MemoryAmount a;
  a.ram = f.ram;
  a.vram = f.vram;
  return a;
}

}  // namespace

void DescribeMemoryBudget(const Config& c, std::ostream& o) {
  if (!UsesMemoryKeys(c)) return;
  const MemoryConfig& m = c.memory;
  o << "memory:\n  budget: "
    << (m.budget.empty() ? std::string("none (groups alone decide what runs together)")
                         : DescribeMemory(m.budget))
    << (m.ram_auto || m.gpus_auto ? "  (auto: what this machine has, less the margin)" : "")
    << "\n  onProtected: "
    << (m.wait_for_protected ? "wait (a load that needs a protected model gone waits)"
                             : "reject (503 + Retry-After naming the protected model)")
    << "\n  overlapSwaps: "
    << (!m.overlap_swaps ? "off (a swap starts the next model once the last one stopped)"
        : !m.HasBudget()
            ? "on, but idle without a budget"
            : "on (a swap starts the next model while the last one stops, when both fit)")
    << "\n  sampleInterval: "
    << (m.sample_interval.count() == 0 ? std::string("off") : Seconds(m.sample_interval)) << "\n";
}

void DescribeModelMemory(const ModelConfig& m, const Config& config, std::ostream& o) {
  if (!m.memory.empty()) o << "  memory: " << DescribeMemory(m.memory) << " (declared)\n";
  if (auto learned = Learned(m, config)) {
    o << "  learned: " << DescribeMemory(AsAmount(learned->learned)) << " (measured "
      << Date(learned->at) << ", " << config.store_path << ")\n";
  }
  if (m.keep_page_cache) o << "  pageCache: keep (its model files count against the RAM budget)\n";
  if (!m.swappable) o << "  swappable: no (never stopped to make room for another model)\n";
  if (m.min_residency.count() > 0) {
    o << "  minResidency: " << m.min_residency.count()
      << " s (not stopped to make room for another model that long after it is ready)\n";
  }
  if (m.prefetch) o << "  prefetch: yes (its model files are read into the page cache first)\n";
  for (const std::string& path : ModelFilesOf(m.argv)) {
    const FileCache f = FilesInPageCache({path});
    o << "  model file: " << path;
    if (f.missing > 0) {
      o << " (not found here)\n";
    } else {
      o << " (" << FormatBytes(static_cast<uint64_t>(f.bytes));
      if (f.unmeasured == 0 && f.bytes > 0) {
        o << ", " << (100 * f.cached / f.bytes) << "% in the page cache";
      }
      o << ")\n";
    }
  }
}

nlohmann::json MemoryBudgetJson(const Config& c) {
  return {{"budget", AmountJson(c.memory.budget)},
          {"ramAuto", c.memory.ram_auto},
          {"gpusAuto", c.memory.gpus_auto},
          {"onProtected", c.memory.wait_for_protected ? "wait" : "reject"},
          {"overlapSwaps", c.memory.overlap_swaps},
          {"sampleInterval", c.memory.sample_interval.count() / 1000.0}};
}

nlohmann::json ModelMemoryCheckJson(const ModelConfig& m, const Config& config) {
  nlohmann::json files = nlohmann::json::array();
  for (const std::string& path : ModelFilesOf(m.argv)) {
    const FileCache f = FilesInPageCache({path});
    files.push_back(
        {{"path", path},
         {"bytes", f.missing > 0 ? nlohmann::json(nullptr) : nlohmann::json(f.bytes)},
         {"cachedBytes",
          f.missing > 0 || f.unmeasured > 0 ? nlohmann::json(nullptr) : nlohmann::json(f.cached)}});
  }
  nlohmann::json learned = nullptr;
  if (auto r = Learned(m, config)) {
    learned = AmountJson(AsAmount(r->learned));
    learned["at"] = r->at;
  }
  return {{"memory", AmountJson(m.memory)},
          {"learned", learned},
          {"pageCache", m.keep_page_cache ? "keep" : "auto"},
          {"swappable", m.swappable},
          {"minResidency", m.min_residency.count()},
          {"prefetch", m.prefetch},
          {"modelFiles", files}};
}

std::vector<Diagnostic> PageCacheWarnings(const Config& c, uint64_t machine_ram) {
  std::vector<Diagnostic> out;
  const uint64_t ram = c.memory.budget.ram.value_or(machine_ram);
  if (ram == 0 || c.matrix) return out;
  for (const auto& [name, g] : c.groups) {
    if (g.swap || g.members.size() < 2) continue;  // members never run together
    uint64_t files = 0, declared = 0;
    for (const std::string& id : g.members) {
      const ModelConfig& m = c.models.at(id);
      files += static_cast<uint64_t>(FilesInPageCache(ModelFilesOf(m.argv)).bytes);
      declared += m.memory.ram.value_or(0);
    }
    if (files == 0 || files + declared <= ram) continue;
    Diagnostic d;
    d.severity = Diagnostic::Severity::kWarning;
    d.pos = g.pos.line > 0 ? g.pos : c.memory.pos;
    d.message = "group \"" + name + "\": its members' model files (" + FormatBytes(files) + ")" +
                (declared > 0 ? " and declared RAM (" + FormatBytes(declared) + ")" : "") +
                " exceed the RAM (" + FormatBytes(ram) +
                (c.memory.budget.ram ? ", the memory budget" : ", this machine's") +
                "): the page cache cannot keep them all, and a model read back from disk runs "
                "several times slower (the page-cache cliff)";
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace swapd
