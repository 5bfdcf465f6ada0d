#include "frontdoor/filters.h"

namespace swapd {

bool HasFilters(const ModelConfig& model) {
  return !model.use_model_name.empty() || !model.strip_params.empty() ||
         (model.set_params.is_object() && !model.set_params.empty());
}

std::optional<std::string> ApplyFilters(const ModelConfig& model, nlohmann::json& document) {
  if (!document.is_object()) return std::nullopt;
  bool changed = false;
  if (!model.use_model_name.empty()) {
    auto it = document.find("model");
    if (it == document.end() || *it != model.use_model_name) {
      document["model"] = model.use_model_name;
      changed = true;
    }
  }
  for (const std::string& key : model.strip_params) {
    if (key == "model") continue;
    changed |= document.erase(key) > 0;
  }
  if (model.set_params.is_object()) {
    for (const auto& [key, value] : model.set_params.items()) {
      if (key == "model") continue;
      auto it = document.find(key);
      if (it == document.end() || *it != value) {
        document[key] = value;
        changed = true;
      }
    }
  }
  if (!changed) return std::nullopt;
  return document.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace swapd
