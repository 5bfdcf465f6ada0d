// The outputs of `swapd bench`: the markdown scoreboard (one line per BenchRow, with the change
// against a previous run when comparing), the JSON document of --json, and the exit status.
// Pure functions of their arguments; thread safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoreboard/bench_result.h"

namespace swapd {

struct ReportInput {
  std::string machine;  // MachineDescription()
  std::string date;     // "2026-12-06 04:30 UTC"
  std::vector<BenchRow> rows;
  // --compare: previous[i] is rows[i]'s previous stored run (nullopt: there is none). Empty when
  // not comparing.
  bool compare = false;
  std::vector<std::optional<BenchRow>> previous;
};

// A header line with the machine and the date, then
// | model | mode | tg t/s | pp t/s | TTFT ms | load s | gates | notes |
// plus | Δ tg | Δ pp | Δ load s | vs previous | when comparing; the swap rows in a table of
// their own: | model | after | cache | via | TTFT ms | load s | read from disk | cached before |
// notes |
// (plus | Δ TTFT ms | Δ load s | vs previous |).
std::string MarkdownScoreboard(const ReportInput& input);

// {"machine": ..., "date": ..., "rows": [ToJson(row)...]} plus "previous": [row or null, ...]
// when comparing.
nlohmann::json JsonReport(const ReportInput& input);

// 0 every row measured and every gate passed; 1 a row failed or a gate failed; 3 when --strict
// refused a row (the machine was busy). (2, a usage error, is decided before any run.)
int BenchExitStatus(const std::vector<BenchRow>& rows, bool refused);

// "2026-12-06 04:30 UTC" for a Unix time.
std::string UtcMinute(int64_t unix_seconds);

}  // namespace swapd
