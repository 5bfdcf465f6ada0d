// BenchRow: one line of `swapd bench`'s scoreboard, the result of benchmarking one model alone
// ("solo"), as a member of a duo hit at once ("duo"), or swapped in while its partner held the
// machine ("swap", with its files cold or warm in the page cache). Plain value type; not
// synchronized. ToJson/FromJson are the one wire and storage format (--json, the bench store, GET
// /api/bench).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace swapd {

// One quality gate's verdict for one model.
struct GateOutcome {
  std::string gate;  // the gate's name
  bool passed = false;
  std::string reason;       // why it failed ("not valid JSON: ..."); empty when passed
  std::string output_path;  // where the offending output was saved; empty when passed
};

struct BenchRow {
  std::string model;          // the model id as asked for
  std::string mode = "solo";  // "solo", "duo" or "swap"
  std::string partner;        // duo: the other member; swap: the model it replaced; solo: empty
  std::string config_hash;    // hash of the model's definition (cmd, env) as the daemon runs it
  int runs = 0;               // measured runs that completed
  double load_seconds = -1;   // cold start to ready; < 0 when unknown (it was already loaded)
  double ttft_ms = -1;        // time to first token, median over runs; < 0 unknown
  double prefill_tps = -1;    // prompt tokens/s, median over runs; < 0 unknown
  double decode_tps = -1;     // generated tokens/s, median over runs; < 0 unknown
  // "timings" when the backend reported llama.cpp's `timings`, "stream" when measured from the
  // stream's chunk arrival times.
  std::string tps_source;
  std::vector<GateOutcome> gates;
  bool noisy = false;  // the quiet-machine guard saw other work during the run
  std::string noise;   // what it saw ("other processes used 1.3 cores"); empty when quiet
  std::string error;   // non-empty: the row failed (backend crashed, start failed, ...)
  // swap: where the model's files were as the swap began: "cold" (dropped from the page cache)
  // or "warm" (read into it); empty for the other modes.
  std::string cache;
  int64_t disk_read_bytes = -1;   // swap: read from disk during the swap (median); < 0 unknown
  double page_cache_before = -1;  // swap: share of its files in the page cache then, 0..1
  std::string detail;             // swap: what the measurement saw ("12% stayed cached: ...")
  std::string via;                // swap: "" through swapd, "llama.cpp router" (--compare-router)
  int64_t finished_at = 0;        // Unix seconds

  bool gates_passed() const;  // every gate passed (true when there were none)
};

nlohmann::json ToJson(const BenchRow& row);
Result<BenchRow> BenchRowFromJson(const nlohmann::json& json);

}  // namespace swapd
