// fuzz_config: YAML text -> Config, the way `swapd check` and the daemon load it.
// The input is one file, or several separated by lines that read exactly `#@file`: then the first
// part is the --config file and the others are files of a --config-dir, which exercises merging
// (they are written to a private temporary directory). Checked invariants: a config loads iff it
// has no error; every diagnostic has a message and every error a position; a strict load never
// succeeds where a lenient one fails; a loaded Config is consistent (models, groups, aliases,
// preload) and equal to itself under DiffConfigs.
#include <stdlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "config/diff.h"
#include "config/loader.h"
#include "fuzz/fuzz_check.h"

namespace swapd {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kFileSeparator = "\n#@file\n";
constexpr size_t kMaxFiles = 4;

std::vector<std::string_view> SplitFiles(std::string_view text) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < kMaxFiles) {
    size_t cut = text.find(kFileSeparator);
    if (cut == std::string_view::npos) break;
    parts.push_back(text.substr(0, cut + 1));  // keeps the newline that ends the last line
    text.remove_prefix(cut + kFileSeparator.size());
  }
  parts.push_back(text);
  return parts;
}

// ${env.NAME}: deterministic, so that a crash reproduces; names containing UNSET are unset.
std::optional<std::string> FakeGetenv(const std::string& name) {
  if (name.find("UNSET") != std::string::npos) return std::nullopt;
  return "env-" + name;
}

// A directory of this process for the --config-dir files, removed at exit.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "swapd-fuzz-config-XXXXXX").string();
    FUZZ_CHECK(mkdtemp(pattern.data()) != nullptr, "mkdtemp");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  // Replaces the directory's content with `files`; returns the path of the --config file.
  std::string Fill(const std::vector<std::string_view>& files) {
    std::error_code ec;
    fs::remove_all(path_ / "d", ec);
    fs::create_directories(path_ / "d");
    std::string main = (path_ / "config.yaml").string();
    std::ofstream(main, std::ios::binary) << files[0];
    for (size_t i = 1; i < files.size(); ++i) {
      std::ofstream(path_ / "d" / ("f" + std::to_string(i) + ".yaml"), std::ios::binary)
          << files[i];
    }
    return main;
  }
  std::string dir() const { return (path_ / "d").string(); }

 private:
  fs::path path_;
};

bool HasError(const LoadResult& r) {
  return std::any_of(r.diagnostics.begin(), r.diagnostics.end(), [](const Diagnostic& d) {
    return d.severity == Diagnostic::Severity::kError;
  });
}

void CheckDiagnostics(const LoadResult& r) {
  FUZZ_CHECK(r.ok() == !HasError(r), "a config loads iff it has no error");
  for (const Diagnostic& d : r.diagnostics) {
    FUZZ_CHECK(!d.message.empty(), "a diagnostic has a message");
    if (d.severity != Diagnostic::Severity::kError) continue;
    FUZZ_CHECK(!d.pos.file.empty(), d.ToString().c_str());
    FUZZ_CHECK(d.pos.line > 0, d.ToString().c_str());
  }
  if (!r.ok()) FUZZ_CHECK(!r.ErrorText().empty(), "a failed load explains itself");
}

void CheckConfig(const Config& c) {
  for (const auto& [id, m] : c.models) {
    FUZZ_CHECK(m.id == id, id.c_str());
    // A model without cmd loads with a warning when it has a proxy (llama-swap allows it).
    FUZZ_CHECK(!m.argv.empty() || !m.proxy.empty(), "a loaded model has a command or a proxy");
    FUZZ_CHECK(c.FindModel(id) == &m, id.c_str());
    auto g = c.groups.find(m.group);
    FUZZ_CHECK(g != c.groups.end(), "a model's group exists");
    const auto& members = g->second.members;
    FUZZ_CHECK(std::count(members.begin(), members.end(), id) == 1,
               "a model is listed once by its group");
    for (const std::string& alias : m.aliases) {
      const ModelConfig* target = c.FindModel(alias);
      FUZZ_CHECK(target == &m, alias.c_str());
    }
  }
  for (const auto& [alias, id] : c.aliases) {
    FUZZ_CHECK(c.models.count(alias) == 0, "an alias is not a model id");
    FUZZ_CHECK(c.models.count(id) == 1, "an alias names a model");
  }
  for (const auto& [name, group] : c.groups) {
    FUZZ_CHECK(group.name == name, name.c_str());
    for (const std::string& id : group.members) {
      auto m = c.models.find(id);
      FUZZ_CHECK(m != c.models.end() && m->second.group == name, "a member is in its group");
    }
  }
  for (const std::string& id : c.preload) {
    FUZZ_CHECK(c.models.count(id) == 1, "preload names models");
  }
  ConfigDiff same = DiffConfigs(c, c);
  FUZZ_CHECK(same.empty() && same.unchanged.size() == c.models.size(), "a config equals itself");
}

LoadResult CheckedLoad(const LoadOptions& options, std::string_view single_file) {
  LoadResult r = options.config_path.empty() && options.config_dir.empty()
                     ? ParseConfig(single_file, "fuzz.yaml", options)
                     : LoadConfig(options);
  CheckDiagnostics(r);
  if (r.ok()) CheckConfig(*r.config);
  return r;
}

}  // namespace
}  // namespace swapd

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace swapd;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> files = SplitFiles(text);

  LoadOptions lenient;
  lenient.getenv = FakeGetenv;
  if (files.size() > 1) {
    static ScratchDir scratch;
    lenient.config_path = scratch.Fill(files);
    lenient.config_dir = scratch.dir();
  }
  LoadOptions strict = lenient;
  strict.strict = true;

  LoadResult l = CheckedLoad(lenient, text);
  LoadResult s = CheckedLoad(strict, text);
  FUZZ_CHECK(!s.ok() || l.ok(), "strict never accepts what lenient rejects");
  if (s.ok()) {
    FUZZ_CHECK(DiffConfigs(*l.config, *s.config).empty(), "strict loads the same config");
  }
  return 0;
}
