// llama-swap's listing and unload routes of the FrontDoor: GET /v1/models and /models,
// GET /running, GET /unload, POST /api/models/unload[/{model}]. Same threading rules as
// front_door.cpp.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/unix_time.h"
#include "frontdoor/error_response.h"
#include "frontdoor/front_door.h"
#include "frontdoor/model_id.h"
#include "frontdoor/model_list.h"

namespace swapd {
namespace {

bool Has(const std::vector<std::string>& list, const char* value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::string Joined(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& s : list) out += (out.empty() ? "" : "+") + s;
  return out;
}

}  // namespace

void AddCapabilities(const ModelCapabilities& caps, nlohmann::json& item) {
  if (!caps.in.empty() || !caps.out.empty()) {
    item["architecture"] = {{"input_modalities", caps.in},
                            {"output_modalities", caps.out},
                            {"modality", Joined(caps.in) + "->" + Joined(caps.out)}};
  }
  item["capabilities"] = {
      {"vision", Has(caps.in, "image")},
      {"audio_transcriptions", Has(caps.in, "audio")},
      {"audio_speech", Has(caps.out, "audio")},
      {"image_generation", Has(caps.out, "image")},
      {"image_to_image", Has(caps.in, "image") && Has(caps.out, "image")},
      {"function_calling", caps.tools},
      {"reranker", caps.reranker},
  };
  if (caps.tools) item["supported_parameters"] = {"tools", "tool_choice"};
  if (caps.context > 0) {
    item["context_length"] = caps.context;
    item["meta"]["n_ctx"] = caps.context;
  }
}

nlohmann::json ModelListEntry(const Config& config, const std::string& id, int64_t created,
                              bool loaded) {
  return {{"id", id},
          {"object", "model"},
          {"created", created},
          {"owned_by", config.owned_by},
          {"status", {{"value", loaded ? "loaded" : "unloaded"}}}};
}

nlohmann::json LocalModelStatus(const BackendInfo& backend) {
  switch (backend.state) {
    case BackendState::kReady:
    case BackendState::kStopping:  // its process is still there
      return {{"value", "loaded"}};
    case BackendState::kStarting:
      return {{"value", "loading"}};
    case BackendState::kStopped:
      break;
    case BackendState::kFailed: {
      nlohmann::json status = {{"value", "unloaded"}, {"failed", true}};
      if (backend.exit_code) status["exit_code"] = *backend.exit_code;
      return status;
    }
  }
  return {{"value", "unloaded"}};
}

void FrontDoor::HandleListModels(HttpResponse& res) {
  auto [cfg, profile] = routing();
  std::map<std::string, BackendInfo> backends;
  for (const auto& m : router_.Snapshot()) backends[m.id] = m.backend;
  nlohmann::json data = nlohmann::json::array();
  const int64_t created = UnixNow();
  auto entry = [&](const std::string& id, const ModelConfig& model) {
    auto found = backends.find(model.id);
    const BackendInfo backend = found == backends.end() ? BackendInfo{} : found->second;
    nlohmann::json item = ModelListEntry(*cfg, id, created, false);
    item["status"] = LocalModelStatus(backend);
    if (!model.name.empty()) item["name"] = model.name;
    if (!model.description.empty()) item["description"] = model.description;
    if (!model.metadata.empty()) item["meta"]["llamaswap"] = model.metadata;
    if (model.capabilities) AddCapabilities(*model.capabilities, item);
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
  // Selectors: "loaded" when a target is ready or starting, as llama-swap.
  for (const auto& [id, sel] : cfg->selectors) {
    if (sel.unlisted) continue;
    bool loaded = false;
    for (const std::string& target : sel.targets) {
      const ModelConfig* model = cfg->FindModel(target);
      if (model == nullptr || backends.count(model->id) == 0) continue;
      const BackendState state = backends[model->id].state;
      loaded |= state == BackendState::kReady || state == BackendState::kStarting;
    }
    nlohmann::json item = ModelListEntry(*cfg, id, created, loaded);
    if (!sel.name.empty()) item["name"] = sel.name;
    if (!sel.description.empty()) item["description"] = sel.description;
    nlohmann::json meta = sel.metadata;
    meta["type"] = "selector";
    meta["strategy"] = ToString(sel.strategy);
    meta["targets"] = sel.targets;
    if (sel.strategy == SelectorConfig::Strategy::kSpillover) meta["spillover"] = sel.spillover;
    item["meta"]["llamaswap"] = std::move(meta);
    sorted[id] = std::move(item);
  }
  AddPeerModels(*cfg, created, sorted);
  // The active profile's pins: new ids are listed (as llama-swap: type profile, unloaded); a
  // disabled id is not.
  if (auto p = cfg->profiles.find(profile); p != cfg->profiles.end()) {
    for (const auto& [id, target] : p->second.pins) {
      if (target.empty()) {
        sorted.erase(id);
        continue;
      }
      const ModelConfig* model = cfg->FindModel(target);
      if (model == nullptr || model->unlisted) continue;
      nlohmann::json item = entry(id, *model);
      item["status"]["value"] = "unloaded";
      item["meta"]["llamaswap"] = {{"type", "profile"}, {"profile", profile}, {"target", target}};
      sorted[id] = std::move(item);
    }
  }
  for (auto& [id, item] : sorted) data.push_back(std::move(item));
  res.SetBody(JsonText(nlohmann::json{{"object", "list"}, {"data", data}}), "application/json");
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
  res.SetBody(JsonText(nlohmann::json{{"running", running}}), "application/json");
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
