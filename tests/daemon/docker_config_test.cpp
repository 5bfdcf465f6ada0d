// docker/config.example.yaml loads without errors or warnings (strict), so the container example
// cannot go stale, and its models use the builds the image carries (docker/Dockerfile).
#include <catch2/catch.hpp>
#include <filesystem>

#include "config/loader.h"

namespace swapd {
namespace {

TEST_CASE("docker/config.example.yaml loads and uses the image's builds", "[unit][docker]") {
  LoadOptions options;
  options.config_path =
      (std::filesystem::path(SWAPD_SOURCE_DIR) / "docker" / "config.example.yaml").string();
  options.strict = true;
  LoadResult result = LoadConfig(options);
  INFO(result.ErrorText());
  REQUIRE(result.ok());
  for (const Diagnostic& d : result.diagnostics) CHECK(d.severity == Diagnostic::Severity::kHint);
  REQUIRE(result.config->models.size() == 3);
  for (const auto& [id, model] : result.config->models) {
    INFO(id);
    REQUIRE_FALSE(model.argv.empty());
    const std::string& program = model.argv.front();
    CHECK((program == "/opt/llama-cpu/llama-server" || program == "/opt/llama-cuda/llama-server"));
    // The build's own libraries come first, so that its libggml is the one loaded.
    std::string build_dir = std::filesystem::path(program).parent_path().string();
    std::string library_path;
    for (const auto& [name, value] : model.env) {
      if (name == "LD_LIBRARY_PATH") library_path = value;
    }
    CHECK(library_path.rfind(build_dir, 0) == 0);
  }
}

}  // namespace
}  // namespace swapd
