// `swapd bench --swap` end to end: the real swapd binary, fake backends that read their "weights"
// (a file the test writes) as they load. Each way, cold and warm: the cold runs find the files
// dropped from the page cache and the warm ones find them cached; a model whose cmd names no
// file, and a pair that runs together, are errors. The drop itself, on a file the test writes.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "memory/memory_meter.h"
#include "memory/page_prefetch.h"
#include "scoreboard/router_compare.h"
#include "tests/scoreboard/bench_run.h"
#include "tests/support/swapd_process.h"
#include "tests/support/temp_dir.h"

namespace swapd {
namespace {

using Catch::Contains;
using nlohmann::json;
using testing::FakeModelYaml;
using testing::FreeLoopbackPort;
using testing::TempDir;

constexpr size_t kWeightBytes = size_t{8} << 20;

// A file of `bytes` bytes that are not all alike (no run of zeros a file system could skip).
std::string Weights(const TempDir& dir, const std::string& name, size_t bytes) {
  std::string data(bytes, '\0');
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<char>((i * 2654435761u) >> 13);
  return dir.Write(name, data);
}

// A fake model whose cmd names no model file (its id by --alias, not --model).
std::string NoFileModelYaml(const std::string& id, int port) {
  return "  " + id + ":\n    cmd: " FAKE_BACKEND_BINARY " --port " + std::to_string(port) +
         " --alias " + id + "\n    proxy: http://127.0.0.1:" + std::to_string(port) + "\n";
}

// Reads the whole file (so that its pages are cached).
void ReadAll(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  char buffer[1 << 16];
  while (::read(fd, buffer, sizeof(buffer)) > 0) {
  }
  ::close(fd);
}

TEST_CASE("DropFromPageCache: a file that was cached is not, afterwards", "[unit][bench][swap]") {
  TempDir dir("swapd-drop");
  const std::string path = Weights(dir, "model.gguf", size_t{4} << 20);
  ReadAll(path);
  const FileCache before = FilesInPageCache({path});
  REQUIRE(before.unmeasured == 0);  // the test owns the file: mincore tells the truth
  CHECK(before.cached == before.bytes);
  const FileCache after = DropFromPageCache({path, dir.Path("missing.gguf")});
  CHECK(after.bytes == before.bytes);
  CHECK(after.cached < after.bytes / 10);
  CHECK(after.missing == 1);
}

TEST_CASE("swapd bench --swap: each way, cold and warm, the page cache dropped and filled",
          "[integration][bench][swap]") {
  TempDir dir("swapd-bench-swap");
  const std::string a = Weights(dir, "a.gguf", kWeightBytes);
  const std::string b = Weights(dir, "b.gguf", kWeightBytes);
  dir.Write("config.yaml", "models:\n" +
                               FakeModelYaml("sw-a", FreeLoopbackPort(), "--weights " + a) +
                               FakeModelYaml("sw-b", FreeLoopbackPort(), "--weights " + b));
  BenchRun run = Bench(dir, std::string(kNeverNoisy) +
                                "--runs 2 --json --store none --swap sw-a,sw-b --markdown " +
                                dir.Path("board.md"));
  INFO("stdout: " << run.out << "\nstderr: " << run.err);
  CHECK(run.exit_code == 0);
  const json rows = Rows(run);
  REQUIRE(rows.size() == 4);
  const char* const expected[4][3] = {{"sw-a", "sw-b", "cold"},
                                      {"sw-a", "sw-b", "warm"},
                                      {"sw-b", "sw-a", "cold"},
                                      {"sw-b", "sw-a", "warm"}};
  for (int i = 0; i < 4; ++i) {
    const json& row = rows[i];
    INFO(row.dump());
    CHECK(row["mode"] == "swap");
    CHECK(row["model"] == expected[i][0]);
    CHECK(row["partner"] == expected[i][1]);
    CHECK(row["cache"] == expected[i][2]);
    CHECK(row["error"] == "");
    CHECK(row["runs"] == 2);
    CHECK(row["ttft_ms"].get<double>() > 0);
    CHECK(row["load_seconds"].get<double>() > 0);
    CHECK(row["disk_read_bytes"].get<int64_t>() >= 0);
    if (row["cache"] == "cold") {
      CHECK(row["page_cache_before"].get<double>() < 0.5);
    } else {
      CHECK(row["page_cache_before"].get<double>() > 0.9);
    }
  }
  const std::string board = BenchFileText(dir.Path("board.md"));
  CHECK_THAT(board,
             Contains("| model | after | cache | via | TTFT ms | load s | read from disk |"));
  CHECK_THAT(board, Contains("| sw-a | sw-b | cold | swapd |"));
  CHECK_THAT(board, Contains("| sw-b | sw-a | warm | swapd |"));
}

TEST_CASE("swapd bench --swap: a model with a slot cache gets a conversation restored or not",
          "[integration][bench][swap][slots]") {
  TempDir dir("swapd-bench-swap");
  const std::string a = Weights(dir, "a.gguf", size_t{1} << 20);
  const std::string b = Weights(dir, "b.gguf", size_t{1} << 20);
  dir.Write("config.yaml", "slotCacheDir: slots\nmodels:\n" +
                               FakeModelYaml("sl-a", FreeLoopbackPort(),
                                             "--weights " + a + " --slot-save-path ${SLOT_DIR}") +
                               FakeModelYaml("sl-b", FreeLoopbackPort(), "--weights " + b));
  BenchRun run =
      Bench(dir, std::string(kNeverNoisy) + "--runs 2 --json --store none --swap sl-a,sl-b");
  INFO("stdout: " << run.out << "\nstderr: " << run.err);
  CHECK(run.exit_code == 0);
  const json rows = Rows(run);
  // sl-a: cold, warm, slot, no slot; sl-b (no ${SLOT_DIR}): cold, warm.
  REQUIRE(rows.size() == 6);
  const char* const caches[6] = {"cold", "warm", "slot", "no slot", "cold", "warm"};
  for (int i = 0; i < 6; ++i) {
    INFO(rows[i].dump());
    CHECK(rows[i]["model"] == (i < 4 ? "sl-a" : "sl-b"));
    CHECK(rows[i]["cache"] == caches[i]);
    CHECK(rows[i]["error"] == "");
    CHECK(rows[i]["runs"] == 2);
    CHECK(rows[i]["page_cache_before"].get<double>() > (i == 0 || i == 4 ? -1.0 : 0.9));
  }
  // The restored slot held the conversation: all but its last token came from it; ignored, none.
  const std::string used = rows[2]["detail"].get<std::string>();
  const std::string ignored = rows[3]["detail"].get<std::string>();
  CHECK_THAT(used, Contains("prompt tokens from the restored slot"));
  CHECK(used.rfind("0 of ", 0) != 0);
  CHECK_THAT(ignored, Contains("prompt tokens from the restored slot"));
  CHECK(ignored.rfind("0 of ", 0) == 0);
}

TEST_CASE("swapd bench --swap: no files to drop, and a pair that runs together, are errors",
          "[integration][bench][swap]") {
  TempDir dir("swapd-bench-swap");
  const std::string a = Weights(dir, "a.gguf", size_t{1} << 20);
  dir.Write("config.yaml",
            "models:\n" + FakeModelYaml("with-file", FreeLoopbackPort(), "--weights " + a) +
                NoFileModelYaml("no-file", FreeLoopbackPort()) +
                NoFileModelYaml("beside", FreeLoopbackPort()) +
                "groups:\n  pair:\n    swap: false\n    members: [with-file, beside]\n");
  BenchRun run = Bench(dir, std::string(kNeverNoisy) +
                                "--runs 1 --json --store none --swap no-file,with-file "
                                "--swap with-file,beside");
  INFO("stdout: " << run.out << "\nstderr: " << run.err);
  CHECK(run.exit_code == 1);
  const json rows = Rows(run);
  REQUIRE(rows.size() == 8);
  // no-file's rows: nothing to make cold or warm. with-file's, after no-file: measured.
  CHECK_THAT(rows[0]["error"].get<std::string>(), Contains("no model files to make cold"));
  CHECK_THAT(rows[1]["error"].get<std::string>(), Contains("no model files to make warm"));
  CHECK(rows[2]["error"] == "");
  CHECK(rows[3]["error"] == "");
  // with-file and beside stay together: no swap either way (beside has no files: that error).
  CHECK_THAT(rows[4]["error"].get<std::string>(), Contains("beside stayed loaded"));
  CHECK_THAT(rows[5]["error"].get<std::string>(), Contains("beside stayed loaded"));
  CHECK_THAT(rows[6]["error"].get<std::string>(), Contains("no model files"));

  // A file that is not on this machine: the bench runs where swapd does.
  dir.Write("config.yaml",
            "models:\n" + FakeModelYaml("far", FreeLoopbackPort(), "--weights /nonexistent.gguf") +
                NoFileModelYaml("near", FreeLoopbackPort()));
  run = Bench(dir, std::string(kNeverNoisy) + "--runs 1 --json --store none --swap far,near");
  CHECK_THAT(Rows(run)[0]["error"].get<std::string>(), Contains("not on this machine"));
}

TEST_CASE("--compare-router: the router's preset of the swapped models", "[unit][bench][swap]") {
  Result<std::string> ini =
      RouterPresetIni({{"coder",
                        {"/opt/llama/llama-server", "-m", "/m/coder.gguf", "--port", "${PORT}",
                         "-c", "8192", "--jinja", "--seed", "-1", "--flash-attn=on", "-a", "x"}},
                       {"writer", {"llama-server", "--model", "/m/writer.gguf", "-ngl", "99"}}});
  REQUIRE(ini.ok());
  CHECK(ini.value() ==
        "version = 1\n"
        "\n[coder]\nmodel = /m/coder.gguf\nc = 8192\njinja = true\nseed = -1\nflash-attn = on\n"
        "\n[writer]\nmodel = /m/writer.gguf\nngl = 99\n");
  Result<std::string> none = RouterPresetIni({{"vllm", {"vllm", "serve", "org/x", "--port", "1"}}});
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(none.status().message(), Contains("no -m/--model"));
}

TEST_CASE("--compare-router: a router that does not start is a clear error",
          "[integration][bench][swap]") {
  TempDir dir("swapd-bench-router");
  const std::string a = Weights(dir, "a.gguf", size_t{1} << 20);
  dir.Write("config.yaml", "models:\n" + FakeModelYaml("ra", FreeLoopbackPort(), "--weights " + a) +
                               FakeModelYaml("rb", FreeLoopbackPort()));
  BenchRun run = Bench(dir, "--store none --swap ra,rb --compare-router /nonexistent/llama-server");
  CHECK(run.exit_code == 1);
  CHECK_THAT(run.err, Contains("--compare-router: llama-server router (/nonexistent/llama-server) "
                               "exited at start"));
  // Without --swap, or with --url: a usage error.
  run = Bench(dir, "--store none --compare-router /bin/true");
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Contains("--compare-router needs --swap A,B and --config FILE"));
}

}  // namespace
}  // namespace swapd
