// `swapd bench` end to end: the real swapd binary benches fake backends through a swapd of its
// own (--config): a solo row measured from llama.cpp's timings and stored, a duo, a failing gate
// with its answer saved, a backend that crashes mid-bench, a busy machine (--strict refuses),
// and --compare against the previous run; which --url hosts are this machine; a bench killed
// mid-run leaves neither its swapd nor a backend behind.
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "scoreboard/bench_command.h"
#include "scoreboard/bench_store.h"
#include "tests/scoreboard/bench_run.h"
#include "tests/support/child_process.h"
#include "tests/support/swapd_process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

namespace swapd {
namespace {

using Catch::Contains;
using nlohmann::json;
using testing::FakeModelYaml;
using testing::FreeLoopbackPort;
using testing::TempDir;

TEST_CASE("swapd bench --url: which URLs are this machine", "[unit][bench]") {
  CHECK(IsLoopbackUrl("http://127.0.0.1:8080"));
  CHECK(IsLoopbackUrl("http://127.0.1.1"));
  CHECK(IsLoopbackUrl("http://localhost:8080/"));
  CHECK(IsLoopbackUrl("http://[::1]:8080"));
  CHECK_FALSE(IsLoopbackUrl("http://10.0.0.2:8080"));
  CHECK_FALSE(IsLoopbackUrl("http://[fe80::1]:8080"));
  CHECK_FALSE(IsLoopbackUrl("http://localhost.example.com:8080"));
}

TEST_CASE("swapd bench: a solo row from timings, gates passed, stored", "[integration][bench]") {
  TempDir dir("swapd-bench");
  // Its alias is listed too, but benched once, as the model.
  dir.Write("config.yaml",
            "includeAliasesInList: true\nmodels:\n" +
                FakeModelYaml("solo-a", FreeLoopbackPort(), "--load-ms 200 --tokens-per-second 400",
                              "    aliases: [solo-alias]\n"));
  const std::string store = dir.Path("bench.db");
  BenchRun run = Bench(dir, std::string(kSmall) + kNeverNoisy + "--json --store '" + store +
                                "' --markdown '" + dir.Path("board.md") + "'");
  INFO("stdout: " << run.out << "\nstderr: " << run.err);
  CHECK(run.exit_code == 0);
  const json rows = Rows(run);
  REQUIRE(rows.size() == 1);  // every listed model: the one
  const json row = rows[0];
  CheckMeasured(row);
  CHECK(row["mode"] == "solo");
  CHECK(row["decode_tps"].get<double>() == Approx(400));  // the fake's timings
  CHECK(row["load_seconds"].get<double>() >= 0.2);        // --load-ms 200
  CHECK(row["noisy"] == false);
  REQUIRE_FALSE(row["gates"].empty());
  CHECK(row["gates_passed"] == true);
  CHECK_THAT(BenchFileText(dir.Path("board.md")), Contains("| solo-a | solo | 400.0 |"));

  auto opened = BenchStore::Open(store);
  REQUIRE(opened.ok());
  auto latest = opened.value()->Latest(10);
  REQUIRE(latest.ok());
  REQUIRE(latest.value().size() == 1);
  CHECK(latest.value()[0].row.model == "solo-a");
  CHECK(latest.value()[0].row.decode_tps == Approx(400));
  CHECK_FALSE(latest.value()[0].machine.empty());
}

TEST_CASE("swapd bench --url: a running swapd", "[integration][bench]") {
  auto swapd = testing::StartSwapd("apiKeys: [sk-bench]\nmodels:\n" +
                                   FakeModelYaml("url-a", FreeLoopbackPort(), "--load-ms 100"));
  REQUIRE(swapd.ok());
  TempDir dir("swapd-bench");
  BenchRun run = Bench(dir, std::string(kSmall) + kNeverNoisy + "--json --store none --no-gates",
                       "--api-key sk-bench --url " + swapd.value().base_url);
  INFO("stdout: " << run.out << "\nstderr: " << run.err);
  CHECK(run.exit_code == 0);
  const json rows = Rows(run);
  REQUIRE(rows.size() == 1);
  CheckMeasured(rows[0]);
  CHECK(rows[0]["model"] == "url-a");

  // Without the key: said, exit 1.
  BenchRun no_key = Bench(dir, "--store none", "--url " + swapd.value().base_url);
  CHECK(no_key.exit_code == 1);
  CHECK_THAT(no_key.err, Contains("cannot use the swapd at"));
  // Nothing at the URL: said, exit 1.
  BenchRun none =
      Bench(dir, "--store none", "--url http://127.0.0.1:" + std::to_string(FreeLoopbackPort()));
  CHECK(none.exit_code == 1);
  CHECK_THAT(none.err, Contains("cannot use the swapd at"));
  swapd.value().process->Kill();
  std::filesystem::remove_all(swapd.value().dir);
}

TEST_CASE("swapd bench: a backend that crashes marks its row, the next model is measured",
          "[integration][bench]") {
  TempDir dir("swapd-bench");
  dir.Write("config.yaml", "models:\n" +
                               FakeModelYaml("crash-a", FreeLoopbackPort(), "--crash-after 1") +
                               FakeModelYaml("fine-b", FreeLoopbackPort()));
  BenchRun run = Bench(dir, std::string(kSmall) + kNeverNoisy + "--json --store none");
  INFO("stdout: " << run.out << "\nstderr: " << run.err);
  CHECK(run.exit_code == 1);
  const json rows = Rows(run);
  REQUIRE(rows.size() == 2);
  const json crashed = RowOf(rows, "crash-a");
  CHECK_THAT(crashed["error"].get<std::string>(), Contains("exit code 3"));
  CHECK(crashed["runs"] == 0);
  CheckMeasured(RowOf(rows, "fine-b"));

  // A model that fails to start: its row says why, with the daemon's message.
  TempDir dir2("swapd-bench");
  dir2.Write("config.yaml",
             "models:\n" + FakeModelYaml("dead", FreeLoopbackPort(), "--exit-during-load 7"));
  BenchRun dead = Bench(dir2, std::string(kSmall) + kNeverNoisy + "--store none dead");
  INFO("stdout: " << dead.out << "\nstderr: " << dead.err);
  CHECK(dead.exit_code == 1);
  CHECK_THAT(dead.out, Contains("| dead | solo | - |"));
  CHECK_THAT(dead.out, Contains("error: failed to start:"));
  CHECK_THAT(dead.out, Contains("exit code 7"));
}

TEST_CASE("swapd bench: a failing gate saves the answer", "[integration][bench]") {
  TempDir dir("swapd-bench");
  dir.Write("config.yaml",
            "models:\n" + FakeModelYaml("bad-json", FreeLoopbackPort(), "--bad-json"));
  BenchRun run = Bench(dir, std::string(kSmall) + kNeverNoisy + "--json --store none");
  INFO("stdout: " << run.out << "\nstderr: " << run.err);
  CHECK(run.exit_code == 1);
  const json rows = Rows(run);
  REQUIRE(rows.size() == 1);
  CheckMeasured(rows[0]);  // measured all the same
  CHECK(rows[0]["gates_passed"] == false);
  bool saw_failure = false;
  for (const json& gate : rows[0]["gates"]) {
    if (gate["passed"] == true) continue;
    saw_failure = true;
    CHECK_FALSE(gate["reason"].get<std::string>().empty());
    const std::string path = gate["output_path"].get<std::string>();
    REQUIRE(std::filesystem::exists(path));
    const std::string answer = BenchFileText(path);
    CHECK(answer.rfind("{", 0) == 0);  // the document, short of its last bracket
    CHECK(json::parse(answer, nullptr, false).is_discarded());
  }
  CHECK(saw_failure);
}

TEST_CASE("swapd bench: a model's noise fails its gates and is stored, printed and saved",
          "[integration][bench]") {
  // A real llama-server on a random-weight model answered this: nlohmann's parse error then
  // quoted the first byte of its first character alone, and the bench died writing the row.
  TempDir dir("swapd-bench");
  dir.Write("config.yaml", "models:\n" + FakeModelYaml("noise", FreeLoopbackPort(),
                                                       "--reply 'ワワワ quant quant'"));
  BenchRun run =
      Bench(dir, std::string(kSmall) + kNeverNoisy + "--json --store '" + dir.Path("bench.db") +
                     "' --markdown '" + dir.Path("scoreboard.md") + "'");
  INFO("stdout: " << run.out << "\nstderr: " << run.err);
  CHECK(run.exit_code == 1);  // a failed gate, not an abort
  const json rows = Rows(run);
  REQUIRE(rows.size() == 1);
  CheckMeasured(rows[0]);
  CHECK(rows[0]["gates_passed"] == false);
  for (const json& gate : rows[0]["gates"]) {
    CHECK_THAT(gate["reason"].get<std::string>(), Contains("not valid JSON at byte 0"));
    CHECK(BenchFileText(gate["output_path"].get<std::string>()) == "ワワワ quant quant");
  }
  CHECK_THAT(BenchFileText(dir.Path("scoreboard.md")), Contains("| noise |"));
  auto stored = BenchStore::Open(dir.Path("bench.db"));
  REQUIRE(stored.ok());
  auto latest = stored.value()->Latest(10);
  REQUIRE(latest.ok());
  REQUIRE(latest.value().size() == 1);
  CHECK(latest.value()[0].row.model == "noise");
  CHECK_FALSE(latest.value()[0].row.gates_passed());
}

TEST_CASE("swapd bench --gates FILE: the user's gates beside the built-in ones",
          "[integration][bench]") {
  TempDir dir("swapd-bench");
  dir.Write("config.yaml", "models:\n" + FakeModelYaml("gated", FreeLoopbackPort()));
  // The fake answers a prompt saying JSON with an object whose keys are the prompt's quoted words.
  const std::string gates = dir.Write("gates.yaml", R"(gates:
  - name: has-city
    prompt: Reply with a JSON object with keys "city" and "tags".
    schema: {type: object, required: [city, tags]}
  - name: wants-zip
    prompt: Reply with a JSON object with keys "city" and "tags".
    schema: {type: object, required: [zip]}
  - name: starts-with-brace
    prompt: Reply in JSON.
    regex: "^\\{"
)");
  BenchRun run =
      Bench(dir, std::string(kSmall) + kNeverNoisy + "--json --store none --gates '" + gates + "'");
  INFO("stdout: " << run.out << "\nstderr: " << run.err);
  CHECK(run.exit_code == 1);  // wants-zip fails
  const json rows = Rows(run);
  REQUIRE(rows.size() == 1);
  std::map<std::string, bool> passed;
  for (const json& gate : rows[0]["gates"]) passed[gate["gate"]] = gate["passed"];
  CHECK(passed.size() == 7);  // 4 built-in + 3
  CHECK(passed["json-object"]);
  CHECK(passed["has-city"]);
  CHECK_FALSE(passed["wants-zip"]);
  CHECK(passed["starts-with-brace"]);
  CHECK(std::filesystem::exists(dir.Path("out/gated-wants-zip.txt")));

  // A gate file that does not load is a usage error, reported before anything runs.
  BenchRun bad = Bench(dir, "--store none --gates '" + dir.Path("missing.yaml") + "'");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Contains("missing.yaml"));
}

TEST_CASE("swapd bench: a duo runs both at once; one that cannot stay together is an error",
          "[integration][bench]") {
  TempDir dir("swapd-bench");
  dir.Write("config.yaml", "models:\n" + FakeModelYaml("duo-a", FreeLoopbackPort()) +
                               FakeModelYaml("duo-b", FreeLoopbackPort()) +
                               FakeModelYaml("alone", FreeLoopbackPort()) +
                               "groups:\n  pair:\n    swap: false\n    members: [duo-a, duo-b]\n");
  BenchRun run =
      Bench(dir, std::string(kSmall) + kNeverNoisy +
                     "--json --store none --no-gates --duo duo-a,duo-b --duo duo-a,alone");
  INFO("stdout: " << run.out << "\nstderr: " << run.err);
  CHECK(run.exit_code == 1);  // the second duo cannot be
  const json rows = Rows(run);
  REQUIRE(rows.size() == 4);
  for (int i : {0, 1}) {
    CheckMeasured(rows[i]);
    CHECK(rows[i]["mode"] == "duo");
  }
  CHECK(rows[0]["model"] == "duo-a");
  CHECK(rows[0]["partner"] == "duo-b");
  CHECK(rows[1]["model"] == "duo-b");
  CHECK(rows[1]["partner"] == "duo-a");
  CHECK_THAT(rows[2]["error"].get<std::string>(), Contains("cannot run together"));
  CHECK_THAT(rows[3]["error"].get<std::string>(), Contains("cannot run together"));
}

TEST_CASE("swapd bench: a busy machine marks the row noisy; --strict refuses it",
          "[integration][bench]") {
  TempDir dir("swapd-bench");
  dir.Write("config.yaml", "models:\n" + FakeModelYaml("noisy-a", FreeLoopbackPort()));
  // Another process burning a core while the bench runs.
  testing::SubprocessSpec spin;
  spin.argv = {"sh", "-c", "while :; do :; done"};
  auto burner = testing::Subprocess::Start(spin);
  REQUIRE(burner.ok());
  const std::string busy = "--noise-cpu 0.3 --noise-disk 100000 --noise-cache 100000 ";
  BenchRun run = Bench(dir, std::string(kSmall) + busy + "--json --store none --no-gates");
  INFO("stdout: " << run.out << "\nstderr: " << run.err);
  CHECK(run.exit_code == 0);  // noisy is a warning
  json rows = Rows(run);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["noisy"] == true);
  CHECK_FALSE(rows[0]["noise"].get<std::string>().empty());
  CHECK(rows[0]["runs"] == 2);

  BenchRun strict = Bench(dir, std::string(kSmall) + busy + "--json --store none --strict");
  INFO("stdout: " << strict.out << "\nstderr: " << strict.err);
  CHECK(strict.exit_code == 3);
  rows = Rows(strict);
  REQUIRE(rows.size() == 1);
  CHECK_THAT(rows[0]["error"].get<std::string>(), Contains("machine busy: "));
  CHECK(rows[0]["runs"] == 0);
  burner.value()->Kill();
}

TEST_CASE("swapd bench killed mid-run: its swapd and the backend go too", "[integration][bench]") {
  TempDir dir("swapd-bench");
  const std::string marker = "bench-orphan-" + std::to_string(FreeLoopbackPort());
  dir.Write("config.yaml",
            "models:\n" + FakeModelYaml(marker, FreeLoopbackPort(), "--tokens-per-second 2"));
  testing::SubprocessSpec spec;
  spec.argv = {SWAPD_BINARY,    "bench",   "--config", dir.Path("config.yaml"), "--output-dir",
               dir.Path("out"), "--store", "none",     "--noise-cpu",           "64",
               "--gen-tokens",  "200"};
  spec.env = {"STATE_DIRECTORY=" + dir.Path()};
  // In the test's process group, so that SIGKILL reaches the bench alone: what follows is the
  // parent-death signals' doing.
  spec.own_process_group = false;
  auto started = testing::Subprocess::Start(spec);
  REQUIRE(started.ok());
  testing::Subprocess& bench = *started.value();
  auto line = bench.WaitForLine("swapd bench: started swapd at", std::chrono::seconds(30));
  INFO(bench.Output());
  REQUIRE(line);
  const int swapd_pid = std::atoi(line->c_str() + line->find("(pid ") + 5);
  REQUIRE(swapd_pid > 0);
  REQUIRE(bench.WaitForLine("swapd bench: " + marker + ": loaded in", std::chrono::seconds(30)));
  REQUIRE_FALSE(testing::PidsWithArg("--model " + marker).empty());
  bench.Signal(SIGKILL);
  REQUIRE(bench.WaitForExit(std::chrono::seconds(10)));
  CHECK(
      testing::WaitFor([&] { return testing::ProcessGone(swapd_pid); }, std::chrono::seconds(30)));
  CHECK(testing::NoneWithArgWithin("--model " + marker, std::chrono::seconds(30)));
}

TEST_CASE("swapd bench --compare shows the previous run", "[integration][bench]") {
  TempDir dir("swapd-bench");
  dir.Write("config.yaml", "models:\n" + FakeModelYaml("cmp-a", FreeLoopbackPort()));
  const std::string args = std::string(kSmall) + kNeverNoisy + "--no-gates --compare --store '" +
                           dir.Path("b.db") + "' ";
  BenchRun first = Bench(dir, args);
  INFO("stdout: " << first.out << "\nstderr: " << first.err);
  CHECK(first.exit_code == 0);
  CHECK_THAT(first.out, Contains("no previous run"));
  BenchRun second = Bench(dir, args + "--json");
  INFO("stdout: " << second.out << "\nstderr: " << second.err);
  CHECK(second.exit_code == 0);
  const json doc = json::parse(second.out, nullptr, false);
  REQUIRE(doc.is_object());
  REQUIRE(doc["previous"].size() == 1);
  CHECK(doc["previous"][0]["model"] == "cmp-a");
  CHECK(doc["previous"][0]["decode_tps"].get<double>() > 0);
  BenchRun third = Bench(dir, args);
  CHECK_THAT(third.out, Contains("| cmp-a | solo |"));
  CHECK_THAT(third.out, Contains("| +0.0% | +0.0% |"));

  // --compare without a store is a usage error.
  CHECK(Bench(dir, "--compare --store none").exit_code == 2);
}

}  // namespace
}  // namespace swapd
