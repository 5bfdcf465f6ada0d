// What the `swapd bench` tests share: running the real binary's bench on a temporary directory
// (bounded by timeout(1)), and reading its JSON rows.
#pragma once

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/support/temp_dir.h"

namespace swapd {

// Small runs, so the tests are fast.
inline const char* const kSmall = "--runs 2 --prompt-tokens 64 --gen-tokens 16 ";
// Limits no busy CI machine reaches, for the tests that must not be noisy.
inline const char* const kNeverNoisy = "--noise-cpu 64 --noise-disk 100000 --noise-cache 100000 ";

struct BenchRun {
  int exit_code = -1;
  std::string out, err;
};

inline std::string BenchFileText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `swapd bench --config DIR/config.yaml ARGS` (or `target` instead of --config) in `dir` (ARGS
// already shell-quoted), bounded by timeout(1) so that a hung bench fails the test instead of
// hanging it. `target`: "--url URL" instead of the config.
inline BenchRun Bench(const testing::TempDir& dir, const std::string& args,
                      const std::string& target = "") {
  // STATE_DIRECTORY: the history store of the swapd it starts goes there, not to $HOME.
  const std::string command =
      "cd '" + dir.Path() + "' && STATE_DIRECTORY='" + dir.Path() +
      "' timeout -k 5 120 '" SWAPD_BINARY "' bench " +
      (target.empty() ? "--config '" + dir.Path("config.yaml") + "'" : target) + " --output-dir '" +
      dir.Path("out") + "' " + args + " >'" + dir.Path("stdout") + "' 2>'" + dir.Path("stderr") +
      "' </dev/null";
  const int status = std::system(command.c_str());
  BenchRun run;
  if (status != -1 && WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  run.out = BenchFileText(dir.Path("stdout"));
  run.err = BenchFileText(dir.Path("stderr"));
  return run;
}

inline nlohmann::json Rows(const BenchRun& run) {
  const nlohmann::json doc = nlohmann::json::parse(run.out, nullptr, /*allow_exceptions=*/false);
  INFO("stdout: " << run.out << "\nstderr: " << run.err);
  REQUIRE(doc.is_object());
  REQUIRE(doc["rows"].is_array());
  CHECK(doc["machine"].is_string());
  return doc["rows"];
}

inline nlohmann::json RowOf(const nlohmann::json& rows, const std::string& model) {
  for (const nlohmann::json& row : rows) {
    if (row["model"] == model) return row;
  }
  FAIL("no row for " << model << " in " << rows.dump());
  return {};
}

inline void CheckMeasured(const nlohmann::json& row) {
  INFO(row.dump());
  CHECK(row["error"] == "");
  CHECK(row["runs"] == 2);
  CHECK(row["decode_tps"].get<double>() > 0);
  CHECK(row["prefill_tps"].get<double>() > 0);
  CHECK(row["ttft_ms"].get<double>() > 0);
  CHECK(row["load_seconds"].get<double>() > 0);
  CHECK(row["tps_source"] == "timings");
  CHECK(row["config_hash"].get<std::string>().size() == 16);
}

}  // namespace swapd
