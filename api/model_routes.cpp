#include "api/model_routes.h"

#include <map>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/unix_time.h"
#include "frontdoor/model_list.h"

namespace swapd {
namespace {

// The entries of the peers' models.
void AddPeerModels(const Config& config, int64_t created,
                   std::map<std::string, nlohmann::json>& sorted) {
  // As llama-swap: "<peer>/<model>", named "<peer>: <model>", never loaded.
  for (const auto& [id, peer] : config.peers) {
    for (const std::string& model : peer.models) {
      const std::string fqn = PeerModelId(id, model);
      nlohmann::json item = ModelListEntry(config, fqn, created, false);
      item["name"] = id + ": " + model;
      item["meta"]["llamaswap"] = {{"type", "peer"}, {"peerID", id}};
      sorted[fqn] = std::move(item);
    }
  }
}

nlohmann::json ListModels(const Routing::Now& now, const Router& router) {
  const Config* cfg = now.config.get();
  const std::string& profile = now.profile;
  std::map<std::string, BackendInfo> backends;
  for (const auto& m : router.Snapshot()) backends[m.id] = m.backend;
  nlohmann::json data = nlohmann::json::array();
  const int64_t created = UnixNow();
  auto entry = [&](const std::string& id, const ModelConfig& model) {
    auto found = backends.find(model.id);
    const BackendInfo backend = found == backends.end() ? BackendInfo{} : found->second;
    nlohmann::json item = ModelListEntry(*cfg, id, created, false);
    item["status"] = LocalModelStatus(backend);
    if (!model.name.empty()) item["name"] = model.name;
    if (!model.description.empty()) item["description"] = model.description;
    // As llama-swap: the metadata, then its own keys: a model's type and aliases, an alias's
    // model (the UI's Playground lists the aliases from them).
    nlohmann::json meta = model.metadata.is_object() ? model.metadata : nlohmann::json::object();
    if (id == model.id) {
      meta["type"] = "model";
      if (!model.aliases.empty()) meta["aliases"] = model.aliases;
    } else {
      meta["type"] = "alias";
      meta["modelID"] = model.id;
    }
    item["meta"]["llamaswap"] = std::move(meta);
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
  return {{"object", "list"}, {"data", std::move(data)}};
}

nlohmann::json Running(const Config& config, const Router& router) {
  const Config* cfg = &config;
  nlohmann::json running = nlohmann::json::array();
  for (const auto& m : router.Snapshot()) {
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
      // Where its backend listens: its ${PORT} moves off a port that was taken.
      item["proxy"] = ProxyInUse(*model, m.backend);
      item["port"] = PortInUse(*model, m.backend);
      item["ttl"] = m.ttl.count();  // the config's, or the residency's (Ollama's keep_alive)
      item["name"] = model->name;
      item["description"] = model->description;
    }
    running.push_back(std::move(item));
  }
  return {{"running", std::move(running)}};
}

}  // namespace

void AddModelRoutes(FrontDoor& door, const Router& router) {
  auto list = [&door, &router](const HttpRequest&, HttpResponse& res, RequestContext&) {
    res.SetBody(JsonText(ListModels(door.routing().Current(), router)), "application/json");
  };
  door.AddRoute("GET", "/v1/models", list);
  door.AddRoute("GET", "/models", list);
  door.AddRoute(
      "GET", "/running", [&door, &router](const HttpRequest&, HttpResponse& res, RequestContext&) {
        res.SetBody(JsonText(Running(*door.routing().config(), router)), "application/json");
      });
}

}  // namespace swapd
