// Every examples/*.yaml loads without errors or warnings, so the examples cannot go stale. The
// folder is listed at run time: a new example is covered without touching this file.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "check/check_command.h"
#include "config/loader.h"
#include "daemon/reload.h"

namespace swapd {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> ExampleFiles() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(SWAPD_SOURCE_DIR) / "examples")) {
    std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// An example may ask the user to set ${env.X}; the test supplies a placeholder for any unset one.
std::optional<std::string> EnvOrPlaceholder(const std::string& name) {
  if (const char* v = std::getenv(name.c_str())) return std::string(v);
  return "/placeholder/" + name;
}

LoadResult LoadExample(const fs::path& file) {
  LoadOptions options;
  options.config_path = file.string();
  options.strict = true;  // an example must not hold an unknown key
  options.getenv = EnvOrPlaceholder;
  return LoadConfig(options);
}

TEST_CASE("every example loads without errors or warnings", "[unit][cli][examples]") {
  std::vector<fs::path> files = ExampleFiles();
  REQUIRE_FALSE(files.empty());
  CHECK(std::find(files.begin(), files.end(),
                  fs::path(SWAPD_SOURCE_DIR) / "examples" / "duo.yaml") != files.end());
  for (const fs::path& file : files) {
    LoadResult result = LoadExample(file);
    INFO(file.filename().string() << ":\n" << result.ErrorText());
    CHECK(result.ok());
    for (const Diagnostic& d : result.diagnostics) {
      CHECK(d.severity == Diagnostic::Severity::kHint);
    }
    if (result.ok()) CHECK_FALSE(result.config->models.empty());
  }
}

TEST_CASE("RunCheck on examples/duo.yaml, as text and as JSON", "[unit][cli][examples]") {
  Options options;
  options.command = Options::Command::kCheck;
  options.config_path = (fs::path(SWAPD_SOURCE_DIR) / "examples" / "duo.yaml").string();
  options.strict = true;
  std::ostringstream out, err;
  CHECK(RunCheck(LoadOptionsFor(options), options.json, out, err) == 0);
  CHECK(err.str().empty());
  CHECK_THAT(out.str(), Catch::EndsWith("5 models, 2 groups: OK\n"));

  options.json = true;
  std::ostringstream json_out, json_err;
  CHECK(RunCheck(LoadOptionsFor(options), options.json, json_out, json_err) == 0);
  auto doc = nlohmann::json::parse(json_out.str());
  CHECK(doc["valid"] == true);
  CHECK(doc["diagnostics"].empty());
  CHECK(doc["config"]["models"].size() == 5);
}

TEST_CASE("examples/duo.yaml is the laptop duo", "[unit][cli][examples]") {
  LoadResult result = LoadExample(fs::path(SWAPD_SOURCE_DIR) / "examples" / "duo.yaml");
  INFO(result.ErrorText());
  REQUIRE(result.ok());
  const Config& c = *result.config;

  const GroupConfig& duo = c.groups.at("duo");
  CHECK_FALSE(duo.swap);
  CHECK(duo.exclusive);
  CHECK(duo.members == std::vector<std::string>{"ornith-35b-duo", "qwen3-4b-duo"});

  const ModelConfig& big = c.models.at("ornith-35b-duo");
  CHECK(big.group == "duo");
  CHECK(big.argv.front() == "/opt/llama-turboquant/bin/llama-server");
  auto has_pair = [](const std::vector<std::string>& argv, const std::string& flag,
                     const std::string& value) {
    auto it = std::find(argv.begin(), argv.end(), flag);
    return it != argv.end() && it + 1 != argv.end() && *(it + 1) == value;
  };
  CHECK(has_pair(big.argv, "--ctx-size", "131072"));
  CHECK(has_pair(big.argv, "-ctk", "q8_0"));
  CHECK(has_pair(big.argv, "-ctv", "turbo2"));
  CHECK(has_pair(big.argv, "--port", std::to_string(big.port)));
  CHECK(std::find(big.argv.begin(), big.argv.end(), "#") == big.argv.end());  // comments dropped
  CHECK(std::find(big.env.begin(), big.env.end(),
                  std::pair<std::string, std::string>{"CUDA_VISIBLE_DEVICES", ""}) !=
        big.env.end());
  CHECK(big.ttl.count() == 0);

  const ModelConfig& small = c.models.at("qwen3-4b-duo");
  CHECK(small.argv.front() == "/opt/llama.cpp/bin/llama-server");
  CHECK(has_pair(small.argv, "-ngl", "99"));
  CHECK(has_pair(small.argv, "--ctx-size", "24576"));
  CHECK(has_pair(small.argv, "-ctk", "q4_0"));

  for (const char* solo : {"ornith-35b", "gpt-oss-20b", "qwen36-35b"}) {
    INFO(solo);
    const ModelConfig& m = c.models.at(solo);
    CHECK(m.group == std::string(kDefaultGroup));
    CHECK(c.GroupOf(m).exclusive);  // loading a solo model swaps the duo out
  }
  CHECK(has_pair(c.models.at("ornith-35b").argv, "--n-cpu-moe", "40"));
  CHECK(c.models.at("qwen36-35b").argv.front() == "/opt/ik_llama.cpp/bin/llama-server");

  // Every build brings its own libraries.
  for (const auto& [id, m] : c.models) {
    INFO(id);
    CHECK(std::any_of(m.env.begin(), m.env.end(),
                      [](const auto& kv) { return kv.first == "LD_LIBRARY_PATH"; }));
  }

  // And `swapd check` can describe it.
  std::string text = DescribeConfig(c);
  CHECK_THAT(text, Catch::Contains("CUDA_VISIBLE_DEVICES=  (set to empty, not unset)"));
}

}  // namespace
}  // namespace swapd
