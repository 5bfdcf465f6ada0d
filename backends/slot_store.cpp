#include "backends/slot_store.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace swapd {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPartialPrefix = "partial-";
constexpr std::string_view kSlotInfix = "-slot";
constexpr std::string_view kSuffix = ".bin";

// "<key>-slot<N>.bin" -> N with *key set; -1 when `name` is not a slot file.
int ParseFileName(const std::string& name, std::string* key) {
  if (name.size() <= kSuffix.size() ||
      name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) {
    return -1;
  }
  const size_t infix = name.rfind(kSlotInfix);
  if (infix == std::string::npos || infix == 0) return -1;
  const std::string digits = name.substr(infix + kSlotInfix.size(),
                                         name.size() - kSuffix.size() - infix - kSlotInfix.size());
  if (digits.empty() || digits.size() > 6 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return -1;
  }
  *key = name.substr(0, infix);
  return std::stoi(digits);
}

Status MakeDirectories(const fs::path& dir) {
  fs::path built;
  for (const fs::path& part : dir) {
    built /= part;
    if (::mkdir(built.c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::Error(ErrorCode::kInternal,
                           "cannot create " + built.string() + ": " + std::strerror(errno));
    }
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::Error(ErrorCode::kInternal, dir.string() + " is not a directory");
  }
  return Status::Ok();
}

}  // namespace

SlotStore::Settings SlotStore::Settings::From(const Config& config) {
  Settings s;
  s.max_bytes = config.slot_cache_max_bytes;
  s.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(config.slot_cache_timeout);
  return s;
}

SlotStore::SlotStore(Settings settings) : settings_(settings) {}

void SlotStore::Configure(Settings settings) {
  std::lock_guard<std::mutex> lock(mu_);
  settings_ = settings;
}

SlotStore::Settings SlotStore::settings() const {
  std::lock_guard<std::mutex> lock(mu_);
  return settings_;
}

void SlotStore::SetObserver(std::function<void(const SlotEvent&)> observer) {
  std::lock_guard<std::mutex> lock(mu_);
  observer_ = std::move(observer);
}

void SlotStore::Notify(const SlotEvent& event) const {
  std::function<void(const SlotEvent&)> observer;
  {
    std::lock_guard<std::mutex> lock(mu_);
    observer = observer_;
  }
  if (observer) observer(event);
}

std::string SlotStore::FileName(const std::string& key, int slot) {
  return key + std::string(kSlotInfix) + std::to_string(slot) + std::string(kSuffix);
}

std::string SlotStore::PartialName(const std::string& key, int slot) {
  return std::string(kPartialPrefix) + FileName(key, slot);
}

Result<std::vector<SlotFile>> SlotStore::Prepare(const std::string& dir, const std::string& key) {
  std::lock_guard<std::mutex> lock(files_mu_);
  if (Status s = MakeDirectories(dir); !s.ok()) return s;
  std::vector<SlotFile> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    std::string file_key;
    const int slot = ParseFileName(name, &file_key);
    if (slot < 0 || !entry.is_regular_file(ec)) continue;  // not ours: leave it alone
    if (file_key == key) {
      files.push_back(SlotFile{slot, name, static_cast<uint64_t>(entry.file_size(ec))});
      continue;
    }
    // Another definition's cache, or a save that never completed: never restorable.
    fs::remove(entry.path(), ec);
    spdlog::info("slot cache: removed {} ({})", entry.path().string(),
                 name.rfind(kPartialPrefix, 0) == 0 ? "an incomplete save"
                                                    : "saved by another model definition");
  }
  if (ec) return Status::Error(ErrorCode::kInternal, "cannot list " + dir + ": " + ec.message());
  std::sort(files.begin(), files.end(),
            [](const SlotFile& a, const SlotFile& b) { return a.slot < b.slot; });
  return files;
}

Result<uint64_t> SlotStore::Commit(const std::string& dir, const std::string& key, int slot) {
  std::lock_guard<std::mutex> lock(files_mu_);
  const fs::path from = fs::path(dir) / PartialName(key, slot);
  const fs::path to = fs::path(dir) / FileName(key, slot);
  std::error_code ec;
  const uint64_t bytes = fs::file_size(from, ec);
  if (ec) return Status::Error(ErrorCode::kInternal, from.string() + ": " + ec.message());
  fs::rename(from, to, ec);  // atomic: the old file or the new one, never half of one
  if (ec)
    return Status::Error(ErrorCode::kInternal,
                         "cannot rename " + from.string() + ": " + ec.message());
  fs::last_write_time(to, fs::file_time_type::clock::now(), ec);
  EnforceLimit(fs::path(dir).parent_path().string());
  return bytes;
}

void SlotStore::Touch(const std::string& dir, const std::string& name) {
  std::lock_guard<std::mutex> lock(files_mu_);
  std::error_code ec;
  fs::last_write_time(fs::path(dir) / name, fs::file_time_type::clock::now(), ec);
}

void SlotStore::Remove(const std::string& dir, const std::string& name) {
  std::lock_guard<std::mutex> lock(files_mu_);
  std::error_code ec;
  fs::remove(fs::path(dir) / name, ec);
}

void SlotStore::EnforceLimit(const std::string& root) {
  struct Entry {
    fs::path path;
    uint64_t bytes;
    fs::file_time_type used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& model_dir : fs::directory_iterator(root, ec)) {
    if (!model_dir.is_directory(ec)) continue;
    for (const auto& entry : fs::directory_iterator(model_dir.path(), ec)) {
      std::string key;
      const std::string name = entry.path().filename().string();
      if (ParseFileName(name, &key) < 0 || name.rfind(kPartialPrefix, 0) == 0 ||
          !entry.is_regular_file(ec)) {
        continue;
      }
      Entry e{entry.path(), static_cast<uint64_t>(entry.file_size(ec)), entry.last_write_time(ec)};
      total += e.bytes;
      entries.push_back(std::move(e));
    }
  }
  const uint64_t max_bytes = settings().max_bytes;
  if (total <= max_bytes) return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& e : entries) {
    if (total <= max_bytes) break;
    if (fs::remove(e.path, ec)) {
      total -= e.bytes;
      spdlog::info(
          "slot cache: removed {} ({} bytes, least recently used) to stay under "
          "slotCacheMaxBytes {}",
          e.path.string(), e.bytes, max_bytes);
    }
  }
}

}  // namespace swapd
