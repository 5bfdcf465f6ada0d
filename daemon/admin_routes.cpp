// The admin routes of HttpServer (llama-swap's and swapd's own): GET /v1/models and /models,
// GET /running, GET /unload, POST /api/models/unload[/{model}], POST /api/config/reload,
// GET /api/models (every configured model's state, counters and last log lines).
// Same threading rules as http_server.cpp.
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "daemon/http_error.h"
#include "daemon/http_server.h"
#include "daemon/metrics.h"
#include "daemon/model_id.h"

namespace swapd {
namespace {

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// How many of a backend's last output lines GET /api/models shows.
constexpr size_t kApiModelsLogLines = 20;

nlohmann::json Lines(const std::string& text) {
  nlohmann::json lines = nlohmann::json::array();
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

}  // namespace

void HttpServer::HandleListModels(const httplib::Request&, httplib::Response& res) {
  auto cfg = config();
  std::map<std::string, BackendState> states;
  for (const auto& m : router_.Snapshot()) states[m.id] = m.backend.state;
  nlohmann::json data = nlohmann::json::array();
  const int64_t created = UnixNow();
  auto entry = [&](const std::string& id, const ModelConfig& model) {
    BackendState state = states.count(model.id) ? states[model.id] : BackendState::kStopped;
    nlohmann::json item = {
        {"id", id},
        {"object", "model"},
        {"created", created},
        {"owned_by", "swapd"},
        {"status", {{"value", state == BackendState::kReady ? "loaded" : "unloaded"}}}};
    if (!model.name.empty()) item["name"] = model.name;
    if (!model.description.empty()) item["description"] = model.description;
    if (!model.metadata.empty()) item["meta"] = {{"llamaswap", model.metadata}};
    return item;
  };
  std::map<std::string, nlohmann::json> sorted;
  for (const auto& [id, model] : cfg->models) {
    if (model.unlisted) continue;
    sorted[id] = entry(id, model);
    if (cfg->include_aliases_in_list) {
      for (const auto& alias : model.aliases) sorted[alias] = entry(alias, model);
    }
  }
  for (auto& [id, item] : sorted) data.push_back(std::move(item));
  res.set_content(nlohmann::json{{"object", "list"}, {"data", data}}.dump(), "application/json");
}

void HttpServer::HandleRunning(const httplib::Request&, httplib::Response& res) {
  auto cfg = config();
  nlohmann::json running = nlohmann::json::array();
  for (const auto& m : router_.Snapshot()) {
    if (m.backend.state == BackendState::kStopped || m.backend.state == BackendState::kFailed) {
      continue;
    }
    const ModelConfig* model = cfg->FindModel(m.id);
    nlohmann::json item = {{"model", m.id},
                           {"state", ToString(m.backend.state)},
                           {"pid", m.backend.pid},
                           {"in_flight", m.in_flight},
                           {"queued", m.queued}};
    if (model) {
      item["proxy"] = model->proxy;
      item["ttl"] = model->ttl.count();
      item["name"] = model->name;
      item["description"] = model->description;
    }
    running.push_back(std::move(item));
  }
  res.set_content(nlohmann::json{{"running", running}}.dump(), "application/json");
}

void HttpServer::HandleApiModels(const httplib::Request&, httplib::Response& res) {
  nlohmann::json models = nlohmann::json::array();
  const auto now = std::chrono::steady_clock::now();
  std::vector<ModelSnapshot> snapshot = router_.Snapshot();
  std::sort(snapshot.begin(), snapshot.end(),
            [](const ModelSnapshot& x, const ModelSnapshot& y) { return x.id < y.id; });
  for (const auto& m : snapshot) {
    const bool ready = m.backend.state == BackendState::kReady;
    ModelCounters counters = metrics_ ? metrics_->Counters(m.id) : ModelCounters{};
    nlohmann::json item = {
        {"id", m.id},
        {"state", ToString(m.backend.state)},
        {"pid", m.backend.pid},
        {"uptime_seconds",
         ready ? std::chrono::duration<double>(now - m.backend.since).count() : 0.0},
        {"last_error", m.backend.last_error},
        {"last_log_lines", Lines(router_.LogTail(m.id, kApiModelsLogLines))},
        {"in_flight", m.in_flight},
        {"queued", m.queued},
        {"generation_tokens_per_second", counters.last_generation_tps},
        {"prompt_tokens_per_second", counters.last_prompt_tps},
        {"starts", counters.starts},
        {"start_failures", counters.start_failures},
        {"crashes", counters.crashes}};
    models.push_back(std::move(item));
  }
  res.set_content(nlohmann::json{{"models", models}}.dump(), "application/json");
}

void HttpServer::HandleUnload(httplib::Response& res, const std::string& model_name) {
  std::string model_id;  // "": all models
  if (!model_name.empty()) {
    auto cfg = config();
    const ModelConfig* model = cfg->FindModel(model_name);
    if (!model) return SetErrorResponse(res, UnknownModelError(model_name));
    model_id = model->id;
  }
  router_.Unload(model_id);
  res.set_content("OK", "text/plain");
}

void HttpServer::HandleReload(const httplib::Request&, httplib::Response& res) {
  std::function<ReloadOutcome()> reload;
  {
    std::lock_guard lock(config_mu_);
    reload = reload_;
  }
  if (!reload) {
    return SetErrorResponse(
        res, Status::Error(ErrorCode::kUnavailable, "reloading is not available in this server"));
  }
  ReloadOutcome outcome = reload();
  res.status = outcome.ok ? 200 : 400;
  res.set_content(ReloadOutcomeJson(outcome).dump(), "application/json");
}

void HttpServer::SetReloadHandler(std::function<ReloadOutcome()> reload) {
  std::lock_guard lock(config_mu_);
  reload_ = std::move(reload);
}

}  // namespace swapd
