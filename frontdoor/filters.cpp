#include "frontdoor/filters.h"

#include "base/json_text.h"

namespace swapd {

bool HasFilters(const ModelConfig& model) {
  return !model.use_model_name.empty() || !model.strip_params.empty() ||
         (model.set_params.is_object() && !model.set_params.empty()) ||
         !model.set_params_by_id.empty();
}

namespace {

// Sets each key of `params` but "model". Returns whether the document changed.
bool SetParams(const nlohmann::json& params, nlohmann::json& document) {
  bool changed = false;
  if (!params.is_object()) return false;
  for (const auto& [key, value] : params.items()) {
    if (key == "model") continue;
    auto it = document.find(key);
    if (it == document.end() || *it != value) {
      document[key] = value;
      changed = true;
    }
  }
  return changed;
}

// useModelName (when `model_name` is not empty), stripParams, setParams. Returns whether the
// document changed.
bool Filter(const std::string& model_name, const std::vector<std::string>& strip,
            const nlohmann::json& set, nlohmann::json& document) {
  bool changed = false;
  if (!model_name.empty()) {
    auto it = document.find("model");
    if (it == document.end() || *it != model_name) {
      document["model"] = model_name;
      changed = true;
    }
  }
  for (const std::string& key : strip) {
    if (key == "model") continue;
    changed |= document.erase(key) > 0;
  }
  changed |= SetParams(set, document);
  return changed;
}

}  // namespace

std::optional<std::string> ApplyFilters(const ModelConfig& model, const std::string& requested_id,
                                        nlohmann::json& document) {
  if (!document.is_object()) return std::nullopt;
  bool changed = Filter(model.use_model_name, model.strip_params, model.set_params, document);
  if (auto by_id = model.set_params_by_id.find(requested_id);
      by_id != model.set_params_by_id.end()) {
    changed |= SetParams(by_id->second.params, document);
  }
  if (!changed) return std::nullopt;
  return JsonText(document);
}

std::optional<std::string> ApplyPeerFilters(const PeerConfig& peer, const std::string& model,
                                            nlohmann::json& document) {
  if (!document.is_object()) return std::nullopt;
  if (!Filter(model, peer.strip_params, peer.set_params, document)) return std::nullopt;
  return JsonText(document);
}

}  // namespace swapd
