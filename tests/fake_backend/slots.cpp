#include "tests/fake_backend/slots.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/fake_backend/http_util.h"
#include "tests/fake_backend/log.h"

namespace fake_backend {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kFileMagic = "fake-llama-server slot v1";

// llama-server's rule: a plain file name inside --slot-save-path, nothing that leaves it.
bool ValidFilename(const std::string& name) {
  return !name.empty() && name.size() <= 255 && name.find('/') == std::string::npos &&
         name.find('\\') == std::string::npos && name != "." && name != ".." &&
         name.front() != ' ' && name.back() != ' ' && name.back() != '.';
}

size_t CommonPrefix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

double MillisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

SlotTable::SlotTable(const Options& options)
    : options_(options), slots_(static_cast<size_t>(std::max(1, options.n_parallel))) {}

int SlotTable::Use(const std::vector<std::string>& prompt, const std::vector<std::string>& answer,
                   int id_slot) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t best = 0;
  size_t best_shared = 0;
  if (id_slot >= 0 && static_cast<size_t>(id_slot) < slots_.size()) {
    best = static_cast<size_t>(id_slot);
    best_shared = CommonPrefix(slots_[best].tokens, prompt);
  } else {
    // The longest shared prefix wins; otherwise the least recently used slot.
    for (size_t i = 1; i < slots_.size(); ++i) {
      if (slots_[i].used < slots_[best].used) best = i;
    }
    for (size_t i = 0; i < slots_.size(); ++i) {
      const size_t shared = CommonPrefix(slots_[i].tokens, prompt);
      if (shared > best_shared) {
        best = i;
        best_shared = shared;
      }
    }
  }
  Slot& slot = slots_[best];
  // A cached token counts only as a prefix of the prompt: llama-server reuses, never reorders.
  const size_t reused = std::min(best_shared, prompt.empty() ? 0 : prompt.size() - 1);
  slot.tokens = prompt;
  for (const std::string& token : answer) {
    for (std::string& w : Words(token)) slot.tokens.push_back(std::move(w));
  }
  slot.task = next_task_++;
  slot.used = Clock::now();
  return static_cast<int>(reused);
}

json SlotTable::List() const {
  std::lock_guard<std::mutex> lock(mu_);
  json list = json::array();
  for (size_t i = 0; i < slots_.size(); ++i) {
    list.push_back({{"id", i},
                    {"id_task", slots_[i].task},
                    {"n_ctx", options_.ctx_size},
                    {"speculative", false},
                    {"is_processing", false},
                    {"n_prompt_tokens", slots_[i].tokens.size()}});
  }
  return list;
}

int SlotTable::Action(int id, const std::string& action, const json& body, json* response) {
  if (id < 0 || static_cast<size_t>(id) >= slots_.size()) {
    *response = ErrorBody(400, "Invalid slot ID", "invalid_request_error");
    return 400;
  }
  if (action == "erase") {
    std::lock_guard<std::mutex> lock(mu_);
    const size_t n = slots_[id].tokens.size();
    slots_[id].tokens.clear();
    *response = {{"id_slot", id}, {"n_erased", n}};
    return 200;
  }
  if (action != "save" && action != "restore") {
    *response = ErrorBody(400, "Invalid action", "invalid_request_error");
    return 400;
  }
  if (options_.slot_save_path.empty()) {
    *response = ErrorBody(
        501, "This server does not support slot " + action + ". Start it with `--slot-save-path`",
        "not_supported_error");
    return 501;
  }
  const std::string filename =
      body.is_object() && body.contains("filename") && body["filename"].is_string()
          ? body["filename"].get<std::string>()
          : "";
  if (!ValidFilename(filename)) {
    *response = ErrorBody(400, "Invalid filename", "invalid_request_error");
    return 400;
  }
  return action == "save" ? Save(id, filename, response) : Restore(id, filename, response);
}

int SlotTable::Save(int id, const std::string& filename, json* response) {
  const auto start = Clock::now();
  if (options_.slot_save_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(options_.slot_save_ms));
  }
  if (options_.slot_save_fail) {
    *response = ErrorBody(500, "failed to save slot (--slot-save-fail)", "server_error");
    return 500;
  }
  std::vector<std::string> tokens;
  {
    std::lock_guard<std::mutex> lock(mu_);
    tokens = slots_[id].tokens;
  }
  const std::string path = options_.slot_save_path + "/" + filename;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << kFileMagic << "\n" << options_.ModelId() << "\n" << options_.ctx_size << "\n";
  const std::string padding(static_cast<size_t>(options_.slot_bytes_per_token), '.');
  for (const std::string& t : tokens) out << t << " " << padding << "\n";
  out.flush();
  if (!out) {
    *response = ErrorBody(500, "failed to write " + path, "server_error");
    return 500;
  }
  const auto written = static_cast<long long>(out.tellp());
  LogLine("slot save_file: id " + std::to_string(id) + " | saved " + std::to_string(tokens.size()) +
          " tokens to " + path);
  *response = {{"id_slot", id},
               {"filename", filename},
               {"n_saved", tokens.size()},
               {"n_written", written},
               {"timings", {{"save_ms", MillisSince(start)}}}};
  return 200;
}

int SlotTable::Restore(int id, const std::string& filename, json* response) {
  const auto start = Clock::now();
  const std::string path = options_.slot_save_path + "/" + filename;
  std::ifstream in(path, std::ios::binary);
  std::string magic, model, ctx;
  if (!in || !std::getline(in, magic) || magic != kFileMagic || !std::getline(in, model) ||
      !std::getline(in, ctx)) {
    *response = ErrorBody(400, "failed to restore slot, could not read " + filename,
                          "invalid_request_error");
    return 400;
  }
  if (model != options_.ModelId() || ctx != std::to_string(options_.ctx_size)) {
    *response = ErrorBody(400, "failed to restore slot: the file was saved by another model",
                          "invalid_request_error");
    return 400;
  }
  std::vector<std::string> tokens;
  long long read = static_cast<long long>(magic.size() + model.size() + ctx.size() + 3);
  for (std::string line; std::getline(in, line);) {
    read += static_cast<long long>(line.size() + 1);
    const size_t space = line.find(' ');
    tokens.push_back(line.substr(0, space));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    slots_[id].tokens = tokens;
    slots_[id].used = Clock::now();
  }
  LogLine("slot restore_file: id " + std::to_string(id) + " | restored " +
          std::to_string(tokens.size()) + " tokens from " + path);
  *response = {{"id_slot", id},
               {"filename", filename},
               {"n_restored", tokens.size()},
               {"n_read", read},
               {"timings", {{"restore_ms", MillisSince(start)}}}};
  return 200;
}

}  // namespace fake_backend
