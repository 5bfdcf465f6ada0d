#include "config/loader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "config/config_reader.h"
#include "config/diagnostics.h"
#include "config/env_macros.h"
#include "config/memory.h"
#include "config/merge.h"
#include "config/model_builder.h"
#include "config/slot_cache_settings.h"
#include "config/store_settings.h"
#include "config/validate.h"
#include "config/yaml_document.h"

namespace swapd {
namespace {

struct SourceFile {
  std::string name;
  std::string text;
};

// Diagnostics in file order: by the order files were loaded, then line and column.
void SortDiagnostics(std::vector<Diagnostic>& diagnostics, const std::vector<std::string>& files) {
  auto rank = [&](const Diagnostic& d) {
    auto it = std::find(files.begin(), files.end(), d.pos.file);
    return static_cast<size_t>(it - files.begin());
  };
  std::stable_sort(diagnostics.begin(), diagnostics.end(),
                   [&](const Diagnostic& a, const Diagnostic& b) {
                     auto ka = std::make_tuple(rank(a), a.pos.line, a.pos.column);
                     auto kb = std::make_tuple(rank(b), b.pos.line, b.pos.column);
                     return ka < kb;
                   });
}

LoadResult Build(const std::vector<SourceFile>& files, const LoadOptions& options,
                 DiagnosticSink& sink) {
  std::vector<YamlNodePtr> roots;
  std::vector<std::string> names;
  bool complete = true;
  for (const auto& f : files) {
    names.push_back(f.name);
    YamlNodePtr root = ParseYaml(f.text, f.name, sink);
    if (!root) {
      complete = false;
      continue;
    }
    SubstituteEnvMacros(*root, options.getenv, sink);
    roots.push_back(root);
  }

  YamlNodePtr merged = MergeTrees(roots, sink);
  RawConfig raw = ReadConfigTree(*merged, options.strict, sink);
  if (raw.globals.slot_cache_dir.empty()) {
    raw.globals.slot_cache_dir = DefaultSlotCacheDir(options.getenv);
  }

  if (!raw.store_set) raw.globals.store_path = DefaultStorePath(options.getenv);
  Config config = raw.globals;
  std::map<std::string, const RawModel*> sorted;  // ${PORT} goes in sorted id order
  for (const auto& m : raw.models) sorted.emplace(m.id, &m);
  int next_port = config.start_port;
  for (const auto& [id, m] : sorted) {
    config.models.emplace(id, BuildModel(*m, raw, next_port, sink));
  }
  ResolveAutoBudgets(config.memory, options.machine, sink);
  LinkAndValidate(raw, config, complete, sink);
  if (config.models.empty() && !sink.has_errors()) {
    Position pos = merged->pos;
    if (pos.file.empty() && !names.empty()) pos = Position{names.front(), 1, 1};
    sink.Warning(pos, "the config defines no models");
  }

  LoadResult result;
  bool failed = sink.has_errors();
  result.diagnostics = sink.Take();
  SortDiagnostics(result.diagnostics, names);
  if (!failed) result.config = std::move(config);
  return result;
}

bool ReadFile(const std::string& path, std::string& text, DiagnosticSink& sink) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    sink.Error(Position{path, 0, 0},
               std::string("cannot read the config: ") + std::strerror(errno));
    return false;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  text = buf.str();
  return true;
}

// Every *.yaml / *.yml file of `dir`, sorted by name.
std::vector<std::string> ConfigDirFiles(const std::string& dir, DiagnosticSink& sink) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    sink.Error(Position{dir, 0, 0}, "cannot read the config directory: " + ec.message());
    return {};
  }
  for (const auto& entry : it) {
    const fs::path& p = entry.path();
    std::string ext = p.extension().string();
    if ((ext == ".yaml" || ext == ".yml") && entry.is_regular_file(ec)) {
      names.push_back(p.filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  std::vector<std::string> paths;
  for (const auto& n : names) paths.push_back((fs::path(dir) / n).string());
  return paths;
}

}  // namespace

std::string LoadResult::ErrorText() const {
  std::string out;
  for (const auto& d : diagnostics) out += d.ToString() + "\n";
  return out;
}

LoadResult LoadConfig(const LoadOptions& options) {
  DiagnosticSink sink;
  std::vector<SourceFile> files;
  if (options.config_path.empty() && options.config_dir.empty()) {
    sink.Error(Position{}, "no config given: use --config FILE and/or --config-dir DIR");
  }
  if (!options.config_path.empty()) {
    SourceFile f{options.config_path, {}};
    if (ReadFile(f.name, f.text, sink)) files.push_back(std::move(f));
  }
  if (!options.config_dir.empty()) {
    for (const auto& path : ConfigDirFiles(options.config_dir, sink)) {
      SourceFile f{path, {}};
      if (ReadFile(f.name, f.text, sink)) files.push_back(std::move(f));
    }
  }
  if (sink.has_errors()) {
    LoadResult result;
    result.diagnostics = sink.Take();
    return result;
  }
  return Build(files, options, sink);
}

LoadResult ParseConfig(std::string_view yaml, std::string_view filename,
                       const LoadOptions& options) {
  DiagnosticSink sink;
  return Build({SourceFile{std::string(filename), std::string(yaml)}}, options, sink);
}

}  // namespace swapd
