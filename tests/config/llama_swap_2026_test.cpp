// The configs of tests/compat/llama-swap-2026 (llama-swap's documented 2026 keys) load with no
// error, no "not supported" warning and no unknown key.
#include <catch2/catch.hpp>

#include <filesystem>

#include "config/loader.h"

namespace swapd {
namespace {

TEST_CASE("llama-swap's 2026 keys load without 'not supported'", "[unit][config][compat]") {
  const std::filesystem::path dir =
      std::filesystem::path(SWAPD_SOURCE_DIR) / "tests/compat/llama-swap-2026";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    LoadOptions options;
    options.config_path = entry.path().string();
    options.getenv = [](const std::string& name) -> std::optional<std::string> {
      return "placeholder-" + name;
    };
    LoadResult r = LoadConfig(options);
    INFO(entry.path().filename().string() << ":\n" << r.ErrorText());
    CHECK(r.ok());
    for (const Diagnostic& d : r.diagnostics) {
      CHECK(d.severity != Diagnostic::Severity::kWarning);
      CHECK(d.severity != Diagnostic::Severity::kError);
    }
  }
  CHECK(files >= 4);
}

}  // namespace
}  // namespace swapd
