// SlotStore: the files of the slot cache on disk, shared by every model. A model's saved
// llama-server slots live in its own directory (ModelConfig::slot_dir, created with mode 0700)
// as "<key>-slot<N>.bin", where the key says which model definition wrote them; a save first
// goes to "partial-<key>-slot<N>.bin" and only a complete save is renamed into place, so a
// half-written file is never restored. The store keeps the total size of all models' files under
// slotCacheMaxBytes by removing the least recently used (saved or restored) first, and tells an
// observer (the metrics) what the slot caches did.
// Thread safe: every method may be called from any thread; file operations are serialized.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "config/config.h"

namespace swapd {

struct SlotFile {
  int slot = 0;
  std::string name;  // file name inside the model's directory
  uint64_t bytes = 0;
};

// What one model's slot cache did; given to the observer.
struct SlotEvent {
  enum class Kind { kSaved, kRestored, kSaveFailed, kRestoreFailed };
  Kind kind = Kind::kSaved;
  std::string model_id;
  int slot = 0;
  uint64_t bytes = 0;  // written or read
  int64_t tokens = 0;  // n_saved / n_restored
  double seconds = 0;  // the request's duration
};

class SlotStore {
 public:
  struct Settings {
    uint64_t max_bytes = uint64_t{16} << 30;
    std::chrono::milliseconds timeout{30000};  // one whole save, or one whole restore
    static Settings From(const Config& config);
  };

  explicit SlotStore(Settings settings);

  // A reloaded config's limits; the next save applies the new bound.
  void Configure(Settings settings);
  Settings settings() const;

  // Called for every SlotEvent, on the thread of the backend that caused it; must not block.
  void SetObserver(std::function<void(const SlotEvent&)> observer);
  void Notify(const SlotEvent& event) const;

  static std::string FileName(const std::string& key, int slot);
  static std::string PartialName(const std::string& key, int slot);

  // Creates `dir` (and missing parents) with mode 0700 and removes what can never be restored
  // for `key`: other keys' files and partial files. Returns the files that can, by slot id.
  Result<std::vector<SlotFile>> Prepare(const std::string& dir, const std::string& key);

  // A save of `slot` finished writing PartialName(key, slot): renames it into place, marks it
  // most recently used and bounds the total size of the slot cache (every model directory next
  // to `dir`). Returns the file's size.
  Result<uint64_t> Commit(const std::string& dir, const std::string& key, int slot);

  // Marks a restored file most recently used.
  void Touch(const std::string& dir, const std::string& name);
  // Removes one file (a failed save's partial file, an empty save, a file that did not restore).
  void Remove(const std::string& dir, const std::string& name);

 private:
  void EnforceLimit(const std::string& root);  // requires files_mu_

  mutable std::mutex mu_;
  Settings settings_;                               // Guarded by mu_.
  std::function<void(const SlotEvent&)> observer_;  // Guarded by mu_.
  std::mutex files_mu_;                             // serializes the file operations
};

}  // namespace swapd
