// DescribeConfig / DescribeConfigJson on Configs built in C++, argv word quoting, and the real
// `swapd check` binary end to end (exit codes 0 / 1 / 2, diagnostics with line:col, --json).
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backends/port_check.h"
#include "check/check_command.h"
#include "tests/support/port_holder.h"

namespace swapd {
namespace {

using Catch::Contains;

Config DuoLikeConfig() {
  Config c;
  c.api_keys = {"sk-secret-one", "sk-secret-two"};
  c.global_ttl = std::chrono::seconds(0);

  ModelConfig big;
  big.id = "ornith-35b-duo";
  big.group = "duo";
  big.aliases = {"coder"};
  big.argv = {"/opt/turboquant/bin/llama-server",
              "--model",
              "/models/My Model.gguf",
              "--chat-template",
              "it's \"quoted\"",
              "--system",
              "",
              "-ctk",
              "q8_0"};
  big.stop_argv = {"kill", "-TERM", "${PID}"};
  big.env = {{"CUDA_VISIBLE_DEVICES", ""}, {"LD_LIBRARY_PATH", "/opt/turboquant/lib"}};
  big.proxy = "http://localhost:5800";
  big.port = 5800;
  big.ttl = std::chrono::seconds(0);
  big.pos = {"duo.yaml", 12, 3};

  ModelConfig small;
  small.id = "qwen3-4b-duo";
  small.group = "duo";
  small.argv = {"llama-server", "-ngl", "99"};
  small.proxy = "http://127.0.0.1:9000";
  small.check_endpoint = "";  // none
  small.ttl = std::chrono::seconds(300);
  small.unlisted = true;
  small.use_model_name = "qwen3:4b";
  small.concurrency_limit = 4;
  small.strip_params = {"temperature", "top_p"};
  small.set_params = {{"top_k", 20}};

  c.models[big.id] = big;
  c.models[small.id] = small;
  GroupConfig duo;
  duo.name = "duo";
  duo.swap = false;
  duo.exclusive = true;
  duo.members = {big.id, small.id};
  c.groups["duo"] = duo;
  return c;
}

TEST_CASE("QuoteWord quotes only what needs it", "[unit][cli]") {
  CHECK(QuoteWord("--model") == "--model");
  CHECK(QuoteWord("/path/x.gguf") == "/path/x.gguf");
  CHECK(QuoteWord("C:\\models\\x.gguf") == "C:\\models\\x.gguf");
  CHECK(QuoteWord("${PID}") == "${PID}");
  CHECK(QuoteWord("") == "''");
  CHECK(QuoteWord("two words") == "'two words'");
  CHECK(QuoteWord("say \"hi\"") == "'say \"hi\"'");
  CHECK(QuoteWord("it's") == "'it'\\''s'");
  CHECK(QuoteWord("line1\nline2") == "$'line1\\nline2'");
  CHECK(QuoteWord("a\tb'c\\") == "$'a\\tb\\'c\\\\'");
}

TEST_CASE("DescribeConfig shows globals, groups and every model", "[unit][cli]") {
  std::string text = DescribeConfig(DuoLikeConfig());
  INFO(text);

  // Globals; API keys are counted, never shown.
  CHECK_THAT(text, Contains("healthCheckTimeout: 120s"));
  CHECK_THAT(text, Contains("startPort: 5800"));
  CHECK_THAT(text, Contains("globalTTL: never"));
  CHECK_THAT(text, Contains("apiKeys: 2 keys"));
  CHECK(text.find("sk-secret") == std::string::npos);

  // The group and its flags.
  CHECK_THAT(text, Contains("group duo:\n  swap: false"));
  CHECK_THAT(text, Contains("exclusive: true"));
  CHECK_THAT(text, Contains("members: ornith-35b-duo, qwen3-4b-duo"));

  // Models sorted by id, argv one word per line, quoted where needed.
  size_t big = text.find("model ornith-35b-duo  (duo.yaml:12:3):");
  size_t small = text.find("model qwen3-4b-duo:");
  REQUIRE(big != std::string::npos);
  REQUIRE(small != std::string::npos);
  CHECK(big < small);
  CHECK_THAT(text,
             Contains("  argv:\n    /opt/turboquant/bin/llama-server\n    --model\n"
                      "    '/models/My Model.gguf'\n    --chat-template\n"
                      "    'it'\\''s \"quoted\"'\n    --system\n    ''\n    -ctk\n    q8_0\n"));
  CHECK_THAT(text, Contains("  cmdStop:\n    kill\n    -TERM\n    ${PID}\n"));
  CHECK_THAT(text, Contains("aliases: coder"));
  CHECK_THAT(text, Contains("group: duo"));

  // Empty env is explicit, and distinct from unset.
  CHECK_THAT(text, Contains("    CUDA_VISIBLE_DEVICES=  (set to empty, not unset)\n"));
  CHECK_THAT(text, Contains("    LD_LIBRARY_PATH=/opt/turboquant/lib\n"));

  CHECK_THAT(text, Contains("proxy: http://localhost:5800"));
  CHECK_THAT(text, Contains("port: 5800"));
  CHECK_THAT(text, Contains("checkEndpoint: /health"));
  CHECK_THAT(text, Contains("ttl: never"));
  CHECK_THAT(text, Contains("unloadTimeout: 10s"));

  // The second model: no check endpoint, a TTL, filters, limits.
  std::string second = text.substr(small);
  CHECK_THAT(second, Contains("checkEndpoint: none"));
  CHECK_THAT(second, Contains("ttl: 300s"));
  CHECK_THAT(second, Contains("port: none"));
  CHECK_THAT(second, Contains("cmdStop: none"));
  CHECK_THAT(second, Contains("env: none"));
  CHECK_THAT(second, Contains("unlisted: true"));
  CHECK_THAT(second, Contains("useModelName: qwen3:4b"));
  CHECK_THAT(second, Contains("concurrencyLimit: 4"));
  CHECK_THAT(second, Contains("stripParams: temperature, top_p"));
  CHECK_THAT(second, Contains("setParams: {\"top_k\":20}"));
}

TEST_CASE("DescribeConfigJson carries the same information", "[unit][cli]") {
  auto doc = nlohmann::json::parse(DescribeConfigJson(DuoLikeConfig()));
  CHECK(doc["apiKeyCount"] == 2);
  CHECK(doc.dump().find("sk-secret") == std::string::npos);
  CHECK(doc["globalTTL"] == 0);
  CHECK(doc["healthCheckTimeout"] == 120);
  CHECK(doc["groups"]["duo"]["swap"] == false);
  CHECK(doc["groups"]["duo"]["exclusive"] == true);
  CHECK(doc["groups"]["duo"]["members"].size() == 2);

  const auto& big = doc["models"]["ornith-35b-duo"];
  CHECK(big["argv"][2] == "/models/My Model.gguf");  // raw words, no display quoting
  CHECK(big["argv"][6] == "");
  CHECK(big["cmdStop"][2] == "${PID}");
  CHECK(big["env"][0] == nlohmann::json({{"name", "CUDA_VISIBLE_DEVICES"}, {"value", ""}}));
  CHECK(big["ttl"] == 0);
  CHECK(big["port"] == 5800);
  CHECK(big["checkEndpoint"] == "/health");
  CHECK(big["definedAt"] == "duo.yaml:12:3");

  const auto& small = doc["models"]["qwen3-4b-duo"];
  CHECK(small["checkEndpoint"] == "none");
  CHECK(small["ttl"] == 300);
  CHECK(small["unlisted"] == true);
  CHECK(small["useModelName"] == "qwen3:4b");
  CHECK(small["filters"]["stripParams"] == nlohmann::json({"temperature", "top_p"}));
  CHECK(small["filters"]["setParams"]["top_k"] == 20);
  CHECK(small["definedAt"] == "");
}

TEST_CASE("DescribeConfigJson survives bytes that are not UTF-8", "[unit][cli]") {
  Config c = DuoLikeConfig();
  c.models["qwen3-4b-duo"].argv.push_back("caf\xe9");
  auto doc = nlohmann::json::parse(DescribeConfigJson(c));
  CHECK(doc["models"]["qwen3-4b-duo"]["argv"].size() == 4);
}

// ---- the real binary ----

namespace fs = std::filesystem;

// A temporary directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "swapd-check-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path Write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
    return path_ / name;
  }

 private:
  fs::path path_;
};

struct CheckRun {
  int exit_code = -1;
  std::string out, err;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs a shell command line with stdout and stderr captured apart.
CheckRun RunShell(const TempDir& dir, const std::string& command_line) {
  std::string command = command_line + " >'" + (dir.path() / "out").string() + "' 2>'" +
                        (dir.path() / "err").string() + "' </dev/null";
  int status = std::system(command.c_str());
  CheckRun run;
  if (status != -1 && WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  run.out = ReadFile(dir.path() / "out");
  run.err = ReadFile(dir.path() / "err");
  return run;
}

// Runs `swapd ARGS` (ARGS already shell-quoted).
CheckRun RunSwapd(const TempDir& dir, const std::string& args) {
  return RunShell(dir, "'" SWAPD_BINARY "' " + args);
}

CheckRun Check(const TempDir& dir, const std::string& yaml, const std::string& flags = "") {
  fs::path file = dir.Write("config.yaml", yaml);
  return RunSwapd(dir, "check --config '" + file.string() + "' " + flags);
}

const char* const kValid = R"(models:
  m1:
    cmd: |
      /opt/llama.cpp/bin/llama-server --port ${PORT}
      --alias "my model"
    env:
      - "CUDA_VISIBLE_DEVICES="
)";

// Line 4, column 5 holds the typo `cmdstop`.
const char* const kTypo = R"(models:
  m1:
    cmd: /opt/llama.cpp/bin/llama-server --port ${PORT}
    cmdstop: kill ${PID}
)";

TEST_CASE("swapd check: a matrix config shows its sets and each load's evictions",
          "[integration][cli]") {
  TempDir dir;
  CheckRun run = Check(dir, R"yaml(models:
  big: {cmd: "srv --port ${PORT}"}
  small: {cmd: "srv --port ${PORT}"}
  voice: {cmd: "srv --port ${PORT}"}
  solo: {cmd: "srv --port ${PORT}"}
matrix:
  evict_costs: {big: 10}
  sets:
    chat: "(big | small) & voice"
    pair: "big & small"
)yaml");
  INFO("stdout:\n" << run.out << "stderr:\n" << run.err);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out,
             Contains("set chat: (big | small) & voice\n    {big, voice}\n    {small, voice}\n"));
  CHECK_THAT(run.out, Contains("    solo: in no set, runs alone"));
  CHECK_THAT(run.out, Contains("4 models, 2 matrix sets: OK\n"));
  CHECK(run.err.empty());
}

TEST_CASE("swapd check: a valid config exits 0 and prints the argv", "[integration][cli]") {
  TempDir dir;
  CheckRun run = Check(dir, kValid);
  INFO("stdout:\n" << run.out << "stderr:\n" << run.err);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("model m1"));
  CHECK_THAT(run.out, Contains("    /opt/llama.cpp/bin/llama-server\n    --port\n    5800\n"));
  CHECK_THAT(run.out, Contains("    'my model'\n"));
  CHECK_THAT(run.out, Contains("CUDA_VISIBLE_DEVICES=  (set to empty, not unset)"));
  CHECK_THAT(run.out, Contains("1 model, 1 group: OK\n"));
}

TEST_CASE("swapd check --json: one document with config and diagnostics", "[integration][cli]") {
  TempDir dir;
  CheckRun run = Check(dir, kTypo, "--json");
  INFO("stdout:\n" << run.out << "stderr:\n" << run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.err.empty());
  auto doc = nlohmann::json::parse(run.out);
  CHECK(doc["valid"] == true);
  CHECK(doc["summary"]["models"] == 1);
  CHECK(doc["summary"]["warnings"] == 1);
  CHECK(doc["config"]["models"]["m1"]["argv"][0] == "/opt/llama.cpp/bin/llama-server");
  REQUIRE(doc["diagnostics"].size() == 1);
  const auto& d = doc["diagnostics"][0];
  CHECK(d["severity"] == "warning");
  CHECK(d["line"] == 4);
  CHECK(d["column"] == 5);
  CHECK_THAT(d["message"].get<std::string>(), Contains("cmdstop"));
  CHECK(fs::path(d["file"].get<std::string>()).filename() == "config.yaml");
}

TEST_CASE("swapd check: a typo'd key warns with line:col, --strict rejects it",
          "[integration][cli]") {
  TempDir dir;
  CheckRun run = Check(dir, kTypo);
  INFO("stdout:\n" << run.out << "stderr:\n" << run.err);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.err, Contains("config.yaml:4:5: warning: "));
  CHECK_THAT(run.err, Contains("cmdstop"));
  CHECK_THAT(run.out, Contains(": OK, 1 warning\n"));

  CheckRun strict = Check(dir, kTypo, "--strict");
  INFO("strict stdout:\n" << strict.out << "strict stderr:\n" << strict.err);
  CHECK(strict.exit_code == 1);
  CHECK_THAT(strict.err, Contains("config.yaml:4:5: error: "));
  CHECK(strict.out.empty());
}

TEST_CASE("swapd check: a bad config exits 1 listing every error", "[integration][cli]") {
  TempDir dir;
  CheckRun run = Check(dir, R"(models:
  a:
    cmd: llama-server --port ${PROT}
    aliases: [same]
  b:
    cmd: llama-server --port ${PORT}
    aliases: [same]
groups:
  g1:
    members: [a, ghost]
)");
  INFO("stdout:\n" << run.out << "stderr:\n" << run.err);
  CHECK(run.exit_code == 1);
  CHECK(run.out.empty());
  CHECK_THAT(run.err, Contains("config.yaml:3:"));  // unknown macro ${PROT}
  CHECK_THAT(run.err, Contains("PROT"));
  CHECK_THAT(run.err, Contains("config.yaml:7:"));  // duplicate alias
  CHECK_THAT(run.err, Contains("same"));
  CHECK_THAT(run.err, Contains("config.yaml:10:"));  // member that is not a model
  CHECK_THAT(run.err, Contains("ghost"));
  size_t errors = 0;
  for (size_t at = run.err.find(": error: "); at != std::string::npos;
       at = run.err.find(": error: ", at + 1)) {
    ++errors;
  }
  CHECK(errors >= 3);
  CHECK_THAT(run.err, Contains("errors"));  // the summary line
}

TEST_CASE("swapd check: a missing file exits 1 with a reason", "[integration][cli]") {
  TempDir dir;
  CheckRun run = RunSwapd(dir, "check --config '" + (dir.path() / "nope.yaml").string() + "'");
  INFO("stderr:\n" << run.err);
  CHECK(run.exit_code == 1);
  CHECK_THAT(run.err, Contains("nope.yaml"));
}

TEST_CASE("swapd: usage errors exit 2, --help and --version exit 0", "[integration][cli]") {
  TempDir dir;
  CheckRun bad = RunSwapd(dir, "check --bogus");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Contains("unknown flag --bogus"));
  CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);

  CHECK(RunSwapd(dir, "--listen 127.0.0.1:99999").exit_code == 2);
  CHECK(RunSwapd(dir, "check --config").exit_code == 2);

  CheckRun help = RunSwapd(dir, "-h");
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Contains("swapd check"));
  CheckRun version = RunSwapd(dir, "-version");
  CHECK(version.exit_code == 0);
  CHECK(version.out.rfind("swapd ", 0) == 0);
}

TEST_CASE("tests/compat/run-corpus.sh tabulates a folder of configs", "[integration][cli]") {
  TempDir dir;
  fs::create_directory(dir.path() / "corpus");
  dir.Write("corpus/a-good.yaml", kValid);
  dir.Write("corpus/b-typo.yml", kTypo);
  dir.Write("corpus/c-bad.yaml", "models:\n  m:\n    cmd: x --port ${PROT}\n");
  // ${env.X} gets a placeholder; the same reference in a comment is harmless.
  dir.Write("corpus/d-env.yaml",
            "# uses ${env.SWAPD_CORPUS_TEST_DIR}\nmodels:\n  m:\n"
            "    cmd: ${env.SWAPD_CORPUS_TEST_DIR}/llama-server --port ${PORT}\n");
  dir.Write("corpus/notes.md", "not a config");
  CheckRun run = RunShell(dir, "'" SWAPD_SOURCE_DIR "/tests/compat/run-corpus.sh' '" +
                                   (dir.path() / "corpus").string() + "' '" SWAPD_BINARY "'");
  INFO("stdout:\n" << run.out << "stderr:\n" << run.err);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("| file | models | warnings | errors | verdict |\n"));
  CHECK_THAT(run.out, Contains("| a-good.yaml | 1 | 0 | 0 | ok |\n"));
  CHECK_THAT(run.out, Contains("| b-typo.yml | 1 | 1 | 0 | ok |\n"));
  CHECK_THAT(run.out, Contains("| c-bad.yaml | - | 0 | "));
  CHECK_THAT(run.out, Contains(" | rejected |\n"));
  CHECK_THAT(run.out, Contains("| d-env.yaml | 1 | 0 | 0 | ok |\n"));
  CHECK(run.out.find("notes.md") == std::string::npos);
  CHECK_THAT(run.out, Contains("4 files: 3 ok, 1 rejected, 0 failed"));

  // The script itself failing (no such folder) is the only non-zero exit.
  CHECK(RunShell(dir, "'" SWAPD_SOURCE_DIR "/tests/compat/run-corpus.sh' '" +
                          (dir.path() / "missing").string() + "' '" SWAPD_BINARY "'")
            .exit_code != 0);
}

}  // namespace
}  // namespace swapd

namespace swapd {
namespace {

TEST_CASE("DescribeConfig says what happens to a ${PORT} that is taken, and looks now",
          "[unit][cli][ports]") {
  ModelConfig m;
  m.id = "m";
  m.argv = {"srv"};
  m.port = FreeLoopbackPort();
  m.proxy = "http://localhost:" + std::to_string(m.port);
  Config c;
  c.models[m.id] = m;
  CHECK_THAT(DescribeConfig(c), Contains("port: " + std::to_string(m.port) +
                                         " (free now; if it is taken when the model starts, "
                                         "swapd starts it on the next free port above"));
  CHECK(nlohmann::json::parse(DescribeConfigJson(c))["models"]["m"]["portInUseNow"] == false);
  testing::PortHolder other(m.port);
  REQUIRE(other.listening());
  CHECK_THAT(DescribeConfig(c), Contains("port: " + std::to_string(m.port) + " (in use now"));
  CHECK(nlohmann::json::parse(DescribeConfigJson(c))["models"]["m"]["portInUseNow"] == true);
}

}  // namespace
}  // namespace swapd
