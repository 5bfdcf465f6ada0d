// The profile routes of the FrontDoor: GET /api/profiles and PUT /api/profiles/active. Same
// threading rules as front_door.cpp.
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "frontdoor/error_response.h"
#include "frontdoor/front_door.h"

namespace swapd {
namespace {

// A profile name, or null for none.
nlohmann::json NameOrNull(const std::string& name) {
  return name.empty() ? nlohmann::json(nullptr) : nlohmann::json(name);
}

}  // namespace

void FrontDoor::HandleListProfiles(HttpResponse& res) {
  auto [cfg, active] = routing();
  nlohmann::json profiles = nlohmann::json::array();
  for (const auto& [name, p] : cfg->profiles) {
    nlohmann::json pins = nlohmann::json::object();
    for (const auto& [id, target] : p.pins) {
      pins[id] = target.empty() ? nlohmann::json(nullptr) : nlohmann::json(target);
    }
    profiles.push_back({{"id", name}, {"description", p.description}, {"pins", pins}});
  }
  nlohmann::json body = {{"active", NameOrNull(active)}, {"profiles", profiles}};
  res.SetBody(JsonText(body), "application/json");
}

void FrontDoor::HandleSetProfile(const HttpRequest& req, HttpResponse& res) {
  nlohmann::json body = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  auto name = body.is_object() ? body.find("name") : body.end();
  if (!body.is_object() || name == body.end() || !(name->is_string() || name->is_null())) {
    return SetErrorResponse(res, Status::Error(ErrorCode::kInvalidArgument,
                                               "expected {\"name\": \"<profile>\"} or "
                                               "{\"name\": null}"));
  }
  const std::string wanted = name->is_null() ? "" : name->get<std::string>();
  {
    std::lock_guard lock(config_mu_);
    if (!wanted.empty() && config_->profiles.count(wanted) == 0) {
      return SetErrorResponse(
          res, Status::Error(ErrorCode::kNotFound, "profile \"" + wanted + "\" not found"));
    }
    active_profile_ = wanted;
  }
  spdlog::info("profile: {}", wanted.empty() ? "none active" : wanted + " active");
  res.SetBody(JsonText(nlohmann::json{{"active", NameOrNull(wanted)}}), "application/json");
}

}  // namespace swapd
