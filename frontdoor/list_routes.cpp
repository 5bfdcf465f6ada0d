// llama-swap's listing and unload routes of the FrontDoor: GET /v1/models and /models,
// GET /running, GET /unload, POST /api/models/unload[/{model}]. Same threading rules as
// front_door.cpp.
#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "frontdoor/error_response.h"
#include "frontdoor/front_door.h"
#include "frontdoor/model_id.h"

namespace swapd {
namespace {

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void FrontDoor::HandleListModels(HttpResponse& res) {
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
  res.SetBody(nlohmann::json{{"object", "list"}, {"data", data}}.dump(), "application/json");
}

void FrontDoor::HandleRunning(HttpResponse& res) {
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
  res.SetBody(nlohmann::json{{"running", running}}.dump(), "application/json");
}

void FrontDoor::HandleUnload(HttpResponse& res, const std::string& model_name) {
  std::string model_id;  // "": all models
  if (!model_name.empty()) {
    auto cfg = config();
    const ModelConfig* model = cfg->FindModel(model_name);
    if (!model) return SetErrorResponse(res, UnknownModelError(model_name));
    model_id = model->id;
  }
  router_.Unload(model_id);
  res.SetBody("OK", "text/plain");
}

}  // namespace swapd
