// The scoreboard's markdown and JSON, with and without --compare, and the exit status.
#include <catch2/catch.hpp>

#include "scoreboard/report.h"

namespace swapd {
namespace {

BenchRow Measured(const std::string& model) {
  BenchRow row;
  row.model = model;
  row.config_hash = "aaaa";
  row.runs = 3;
  row.load_seconds = 1.234;
  row.ttft_ms = 85.4;
  row.prefill_tps = 812.46;
  row.decode_tps = 41.25;
  row.tps_source = "timings";
  row.gates = {{"json-object", true, "", ""}, {"json-array", true, "", ""}};
  row.finished_at = 1796530000;
  return row;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t begin = 0;
  for (size_t end; (end = text.find('\n', begin)) != std::string::npos; begin = end + 1) {
    lines.push_back(text.substr(begin, end - begin));
  }
  return lines;
}

TEST_CASE("report: the markdown scoreboard", "[unit][bench]") {
  ReportInput input;
  input.machine = "host: box (CPU x, 2 cores)";
  input.date = "2026-12-06 04:30 UTC";
  BenchRow ok = Measured("qwen|4b");
  BenchRow failed = Measured("gemma");
  failed.gates[1] = {"json-array", false, "not valid JSON: at 12", "out/gemma-json-array.txt"};
  failed.noisy = true;
  failed.noise = "other processes used 1.3 cores (limit 0.5)";
  failed.tps_source = "stream";
  BenchRow crashed;
  crashed.model = "big";
  crashed.mode = "duo";
  crashed.partner = "small";
  crashed.error = "run 1: backend crashed\nexit code 3";
  input.rows = {ok, failed, crashed};
  const std::vector<std::string> lines = Lines(MarkdownScoreboard(input));
  REQUIRE(lines.size() == 7);
  CHECK(lines[0] == "swapd bench on host: box (CPU x, 2 cores), 2026-12-06 04:30 UTC");
  CHECK(lines[2] == "| model | mode | tg t/s | pp t/s | TTFT ms | load s | gates | notes |");
  CHECK(lines[4] == "| qwen\\|4b | solo | 41.2 | 812.5 | 85 | 1.23 | pass 2/2 |  |");
  CHECK(lines[5] ==
        "| gemma | solo | 41.2 | 812.5 | 85 | 1.23 | FAIL 1/2 (json-array) | noisy: other "
        "processes used 1.3 cores (limit 0.5); t/s measured from the stream; json-array answer "
        "in out/gemma-json-array.txt |");
  CHECK(lines[6] ==
        "| big | duo with small | - | - | - | - | - | error: run 1: backend crashed exit code 3 |");
}

TEST_CASE("report: --compare columns", "[unit][bench]") {
  ReportInput input;
  input.machine = "m";
  input.date = "d";
  input.compare = true;
  BenchRow now = Measured("qwen");
  now.config_hash = "bbbb";
  now.gates[0].passed = false;
  BenchRow before = Measured("qwen");
  before.decode_tps = 50;
  before.prefill_tps = 800;
  before.load_seconds = 1.0;
  input.rows = {now, Measured("new")};
  input.previous = {before, std::nullopt};
  const std::vector<std::string> lines = Lines(MarkdownScoreboard(input));
  REQUIRE(lines.size() == 6);
  CHECK(lines[2].find("| Δ tg | Δ pp | Δ load s | vs previous |") != std::string::npos);
  CHECK(lines[4].find("| -17.5% | +1.6% | +0.23 | 2026-12-06 ") != std::string::npos);
  CHECK(lines[4].find("config changed, gates: json-object pass -> FAIL |") != std::string::npos);
  CHECK(lines[5].find("| - | - | - | no previous run |") != std::string::npos);

  const nlohmann::json json = JsonReport(input);
  CHECK(json["machine"] == "m");
  REQUIRE(json["rows"].size() == 2);
  CHECK(json["rows"][0]["model"] == "qwen");
  REQUIRE(json["previous"].size() == 2);
  CHECK(json["previous"][0]["decode_tps"] == 50.0);
  CHECK(json["previous"][1].is_null());
  input.compare = false;
  CHECK_FALSE(JsonReport(input).contains("previous"));
}

TEST_CASE("report: exit status", "[unit][bench]") {
  BenchRow ok = Measured("a");
  CHECK(BenchExitStatus({ok}, false) == 0);
  CHECK(BenchExitStatus({}, false) == 0);
  BenchRow gate = ok;
  gate.gates[0].passed = false;
  CHECK(BenchExitStatus({ok, gate}, false) == 1);
  BenchRow error = ok;
  error.error = "failed to start";
  CHECK(BenchExitStatus({error}, false) == 1);
  BenchRow noisy = ok;
  noisy.noisy = true;
  CHECK(BenchExitStatus({noisy}, false) == 0);
  CHECK(BenchExitStatus({ok, error}, true) == 3);
  CHECK(UtcMinute(0) == "1970-01-01 00:00 UTC");
}

TEST_CASE("report: the swap rows in a table of their own, and in JSON", "[unit][bench]") {
  ReportInput input;
  input.machine = "m";
  input.date = "d";
  BenchRow swap;
  swap.model = "big";
  swap.mode = "swap";
  swap.partner = "small";
  swap.cache = "cold";
  swap.runs = 3;
  swap.ttft_ms = 4210.4;
  swap.load_seconds = 3.917;
  swap.disk_read_bytes = int64_t{3} << 29;  // 1.5 GiB
  swap.page_cache_before = 0.021;
  swap.detail = "prefetch on";
  BenchRow warm = swap;
  warm.cache = "warm";
  warm.via = "llama.cpp router";
  warm.load_seconds = -1;
  warm.disk_read_bytes = -1;
  warm.page_cache_before = -1;
  warm.detail.clear();
  input.rows = {swap, warm};
  std::vector<std::string> lines = Lines(MarkdownScoreboard(input));
  REQUIRE(lines.size() == 6);
  CHECK(lines[2] ==
        "| model | after | cache | via | TTFT ms | load s | read from disk | cached before | notes "
        "|");
  CHECK(lines[4] == "| big | small | cold | swapd | 4210 | 3.92 | 1536.0 MiB | 2% | prefetch on |");
  CHECK(lines[5] == "| big | small | warm | llama.cpp router | 4210 | - | - | - |  |");
  // Beside other rows: the main table first, then the swaps.
  input.rows = {Measured("solo"), swap};
  lines = Lines(MarkdownScoreboard(input));
  REQUIRE(lines.size() == 9);
  CHECK(lines[4].starts_with("| solo | solo |"));
  CHECK(lines[6].starts_with("| model | after | cache |"));
  CHECK(lines[8].starts_with("| big | small | cold |"));
  const nlohmann::json row = JsonReport(input)["rows"][1];
  CHECK(row["cache"] == "cold");
  CHECK(row["disk_read_bytes"] == int64_t{3} << 29);
  CHECK(row["page_cache_before"] == 0.021);
  const Result<BenchRow> back = BenchRowFromJson(row);
  REQUIRE(back.ok());
  CHECK(back.value().cache == "cold");
  CHECK(back.value().disk_read_bytes == int64_t{3} << 29);
  CHECK(back.value().detail == "prefetch on");
}

}  // namespace
}  // namespace swapd
