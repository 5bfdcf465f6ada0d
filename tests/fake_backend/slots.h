// SlotTable: fake-llama-server's slots and their prompt cache, the way llama-server keeps them.
// Each slot remembers the tokens (words) of its last prompt and answer; a request is given the
// slot whose tokens share the longest prefix with its prompt and reports only the rest as
// processed (timings.prompt_n) and the shared part as reused (timings.cache_n). With
// --slot-save-path, a slot can be saved to a file and restored in another process (GET /slots,
// POST /slots/{id}?action=save|restore|erase, llama-server's shapes). Thread safe (one mutex).
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/fake_backend/options.h"

namespace fake_backend {

// Whitespace-separated words: the fake's tokens.
std::vector<std::string> Words(const std::string& text);

class SlotTable {
 public:
  explicit SlotTable(const Options& options);

  // Takes a slot for a prompt (`id_slot` >= 0 asks for one) and returns how many of the prompt's
  // tokens it already held; the slot then holds the prompt and the answer.
  int Use(const std::vector<std::string>& prompt, const std::vector<std::string>& answer,
          int id_slot);

  nlohmann::json List() const;  // GET /slots
  // POST /slots/{id}?action=...: sets the response body and returns its HTTP status.
  int Action(int id, const std::string& action, const nlohmann::json& body,
             nlohmann::json* response);

 private:
  struct Slot {
    std::vector<std::string> tokens;
    int task = -1;  // the last task's id; -1 never used
    std::chrono::steady_clock::time_point used;
  };
  int Save(int id, const std::string& filename, nlohmann::json* response);
  int Restore(int id, const std::string& filename, nlohmann::json* response);

  const Options options_;
  mutable std::mutex mu_;
  std::vector<Slot> slots_;  // Guarded by mu_.
  int next_task_ = 0;        // Guarded by mu_.
};

}  // namespace fake_backend
