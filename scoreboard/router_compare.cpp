#include "scoreboard/router_compare.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>

#include "backends/port_check.h"

namespace swapd {
namespace {

bool IsFlag(const std::string& word) {
  if (word.size() < 2 || word.front() != '-') return false;
  // A negative number is a value ("--seed -1"), not a flag.
  return !(std::isdigit(static_cast<unsigned char>(word[1])) || word[1] == '.');
}

}  // namespace

Result<std::string> RouterPresetIni(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& models) {
  static const std::set<std::string> kRouterOwned = {"port", "host", "alias", "a"};
  std::string ini = "version = 1\n";
  for (const auto& [id, argv] : models) {
    std::string section = "\n[" + id + "]\n";
    bool has_model = false;
    for (size_t i = 1; i < argv.size(); ++i) {
      if (!IsFlag(argv[i])) continue;  // a stray value
      std::string key = argv[i].substr(argv[i][1] == '-' ? 2 : 1);
      std::string value = "true";
      if (const size_t eq = key.find('='); eq != std::string::npos) {
        value = key.substr(eq + 1);
        key.resize(eq);
      } else if (i + 1 < argv.size() && !IsFlag(argv[i + 1])) {
        value = argv[++i];
      }
      if (key == "m") key = "model";
      if (kRouterOwned.count(key) != 0) continue;
      has_model |= key == "model";
      section += key + " = " + value + "\n";
    }
    if (!has_model) {
      return Status::Error(ErrorCode::kInvalidArgument,
                           "model " + id + ": its cmd has no -m/--model for llama.cpp's router");
    }
    ini += section;
  }
  return ini;
}

Result<std::unique_ptr<OwnServer>> StartRouter(const BenchOptions& o, const Config& config,
                                               std::chrono::seconds timeout) {
  std::vector<std::pair<std::string, std::vector<std::string>>> models;
  std::set<std::string> seen;
  for (const auto& [a, b] : o.swaps) {
    for (const std::string& id : {a, b}) {
      if (!seen.insert(id).second) continue;
      const ModelConfig* model = config.FindModel(id);
      if (model == nullptr) {
        return Status::Error(ErrorCode::kInvalidArgument,
                             "--swap names " + id + ", which is not a model of " + o.config_path);
      }
      models.emplace_back(id, model->argv);
    }
  }
  Result<std::string> ini = RouterPresetIni(models);
  if (!ini.ok()) return ini.status();
  std::error_code ec;
  std::filesystem::create_directories(o.output_dir, ec);
  const std::string preset = (std::filesystem::path(o.output_dir) / "router-models.ini").string();
  std::ofstream(preset, std::ios::trunc) << ini.value();
  const int port = FreeLoopbackPort();
  if (port <= 0) return Status::Error(ErrorCode::kInternal, "no free loopback port");
  return OwnServer::Start({o.compare_router, "--models-preset", preset, "--models-max", "1",
                           "--host", "127.0.0.1", "--port", std::to_string(port)},
                          port, (std::filesystem::path(o.output_dir) / "llama-router.log").string(),
                          timeout, "llama-server router (" + o.compare_router + ")");
}

}  // namespace swapd
