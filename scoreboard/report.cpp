#include "scoreboard/report.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "base/text.h"

namespace swapd {
namespace {

constexpr const char* kUnknown = "-";

// A figure of the table; a negative one is not known.
std::string Figure(double value, int decimals) {
  return value < 0 ? std::string(kUnknown) : FixedPoint(value, decimals);
}

// A table cell: one line (runs of white space become one space), '|' escaped.
std::string Cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else if (c == '|') {
      out += "\\|";
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string Mode(const BenchRow& row) {
  return row.mode == "duo" && !row.partner.empty() ? "duo with " + row.partner : row.mode;
}

std::string Gates(const BenchRow& row) {
  if (row.gates.empty()) return kUnknown;
  int passed = 0;
  std::string failed;
  for (const GateOutcome& g : row.gates) {
    if (g.passed) {
      ++passed;
    } else {
      failed += (failed.empty() ? "" : ", ") + g.gate;
    }
  }
  const std::string count = std::to_string(passed) + "/" + std::to_string(row.gates.size());
  return failed.empty() ? "pass " + count : "FAIL " + count + " (" + failed + ")";
}

std::string Notes(const BenchRow& row) {
  std::string notes;
  auto add = [&notes](const std::string& note) { notes += (notes.empty() ? "" : "; ") + note; };
  if (!row.error.empty()) add("error: " + row.error);
  if (!row.detail.empty()) add(row.detail);
  if (row.noisy) add("noisy: " + row.noise);
  if (row.tps_source == "stream") add("t/s measured from the stream");
  for (const GateOutcome& g : row.gates) {
    if (!g.passed && !g.output_path.empty()) add(g.gate + " answer in " + g.output_path);
  }
  return notes;
}

std::string Percent(double now, double before) {
  if (now < 0 || before <= 0) return kUnknown;
  char text[32];
  std::snprintf(text, sizeof(text), "%+.1f%%", (now - before) * 100.0 / before);
  return text;
}

std::string SecondsChange(double now, double before) {
  if (now < 0 || before < 0) return kUnknown;
  char text[32];
  std::snprintf(text, sizeof(text), "%+.2f", now - before);
  return text;
}

// "2026-12-06 04:30 UTC, config changed, gates: json-array pass -> FAIL"
std::string VersusPrevious(const BenchRow& now, const BenchRow& before) {
  std::string text = UtcMinute(before.finished_at);
  if (!before.config_hash.empty() && before.config_hash != now.config_hash) {
    text += ", config changed";
  }
  std::string gates;
  for (const GateOutcome& g : now.gates) {
    for (const GateOutcome& old : before.gates) {
      if (old.gate != g.gate || old.passed == g.passed) continue;
      gates +=
          (gates.empty() ? "" : ", ") + g.gate + (old.passed ? " pass -> FAIL" : " FAIL -> pass");
    }
  }
  if (!gates.empty()) text += ", gates: " + gates;
  if (!before.error.empty()) text += ", it failed then";
  return text;
}

// The compared row before rows[i], or null.
const BenchRow* PreviousOf(const ReportInput& input, size_t i) {
  if (i >= input.previous.size() || !input.previous[i].has_value()) return nullptr;
  return &*input.previous[i];
}

// The table of the swap rows: | model | after | cache | via | TTFT ms | load s | read from disk |
// cached before | notes | (plus | Δ TTFT ms | Δ load s | vs previous | when comparing).
std::string SwapTable(const ReportInput& input) {
  std::string out =
      "| model | after | cache | via | TTFT ms | load s | read from disk | cached before | notes |";
  if (input.compare) out += " Δ TTFT ms | Δ load s | vs previous |";
  out += "\n|---|---|---|---|---:|---:|---:|---:|---|";
  if (input.compare) out += "---:|---:|---|";
  out += "\n";
  for (size_t i = 0; i < input.rows.size(); ++i) {
    const BenchRow& row = input.rows[i];
    if (row.mode != "swap") continue;
    out +=
        "| " + Cell(row.model) + " | " + Cell(row.partner) + " | " + Cell(row.cache) + " | " +
        Cell(row.via.empty() ? "swapd" : row.via) + " | " + Figure(row.ttft_ms, 0) + " | " +
        Figure(row.load_seconds, 2) + " | " +
        (row.disk_read_bytes < 0 ? kUnknown
                                 : FixedPoint(row.disk_read_bytes / 1048576.0, 1) + " MiB") +
        " | " +
        (row.page_cache_before < 0 ? kUnknown : FixedPoint(row.page_cache_before * 100, 0) + "%") +
        " | " + Cell(Notes(row)) + " |";
    if (input.compare) {
      const BenchRow* before = PreviousOf(input, i);
      out += before == nullptr ? " - | - | no previous run |"
                               : " " + SecondsChange(row.ttft_ms, before->ttft_ms) + " | " +
                                     SecondsChange(row.load_seconds, before->load_seconds) + " | " +
                                     Cell(VersusPrevious(row, *before)) + " |";
    }
    out += "\n";
  }
  return out;
}

}  // namespace

std::string UtcMinute(int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M UTC", &tm);
  return text;
}

std::string MarkdownScoreboard(const ReportInput& input) {
  std::string out = "swapd bench on " + input.machine + ", " + input.date + "\n\n";
  const bool swaps = std::any_of(input.rows.begin(), input.rows.end(),
                                 [](const BenchRow& row) { return row.mode == "swap"; });
  const bool others = std::any_of(input.rows.begin(), input.rows.end(),
                                  [](const BenchRow& row) { return row.mode != "swap"; });
  if (swaps && !others) return out + SwapTable(input);
  out += "| model | mode | tg t/s | pp t/s | TTFT ms | load s | gates | notes |";
  if (input.compare) out += " Δ tg | Δ pp | Δ load s | vs previous |";
  out += "\n|---|---|---:|---:|---:|---:|---|---|";
  if (input.compare) out += "---:|---:|---:|---|";
  out += "\n";
  for (size_t i = 0; i < input.rows.size(); ++i) {
    const BenchRow& row = input.rows[i];
    if (row.mode == "swap") continue;
    out += "| " + Cell(row.model) + " | " + Cell(Mode(row)) + " | " + Figure(row.decode_tps, 1) +
           " | " + Figure(row.prefill_tps, 1) + " | " + Figure(row.ttft_ms, 0) + " | " +
           Figure(row.load_seconds, 2) + " | " + Cell(Gates(row)) + " | " + Cell(Notes(row)) + " |";
    if (input.compare) {
      const BenchRow* before = PreviousOf(input, i);
      if (before == nullptr) {
        out += " - | - | - | no previous run |";
      } else {
        const BenchRow& b = *before;
        out += " " + Percent(row.decode_tps, b.decode_tps) + " | " +
               Percent(row.prefill_tps, b.prefill_tps) + " | " +
               SecondsChange(row.load_seconds, b.load_seconds) + " | " +
               Cell(VersusPrevious(row, b)) + " |";
      }
    }
    out += "\n";
  }
  if (swaps) out += "\n" + SwapTable(input);
  return out;
}

nlohmann::json JsonReport(const ReportInput& input) {
  nlohmann::json rows = nlohmann::json::array();
  for (const BenchRow& row : input.rows) rows.push_back(ToJson(row));
  nlohmann::json report = {{"machine", input.machine}, {"date", input.date}, {"rows", rows}};
  if (input.compare) {
    nlohmann::json previous = nlohmann::json::array();
    for (size_t i = 0; i < input.rows.size(); ++i) {
      const bool has = i < input.previous.size() && input.previous[i].has_value();
      previous.push_back(has ? ToJson(*input.previous[i]) : nlohmann::json(nullptr));
    }
    report["previous"] = std::move(previous);
  }
  return report;
}

int BenchExitStatus(const std::vector<BenchRow>& rows, bool refused) {
  if (refused) return 3;
  for (const BenchRow& row : rows) {
    if (!row.error.empty() || !row.gates_passed()) return 1;
  }
  return 0;
}

}  // namespace swapd
