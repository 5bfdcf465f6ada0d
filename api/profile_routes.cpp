#include "api/profile_routes.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "frontdoor/error_response.h"

namespace swapd {
namespace {

// A profile name, or null for none.
nlohmann::json NameOrNull(const std::string& name) {
  return name.empty() ? nlohmann::json(nullptr) : nlohmann::json(name);
}

void ListProfiles(const Routing& routing, HttpResponse& res) {
  const Routing::Now now = routing.Current();
  nlohmann::json profiles = nlohmann::json::array();
  for (const auto& [name, p] : now.config->profiles) {
    nlohmann::json pins = nlohmann::json::object();
    for (const auto& [id, target] : p.pins) {
      pins[id] = target.empty() ? nlohmann::json(nullptr) : nlohmann::json(target);
    }
    profiles.push_back({{"id", name}, {"description", p.description}, {"pins", pins}});
  }
  nlohmann::json body = {{"active", NameOrNull(now.profile)}, {"profiles", profiles}};
  res.SetBody(JsonText(body), "application/json");
}

void SetProfile(Routing& routing, const HttpRequest& req, HttpResponse& res,
                const std::function<void()>& changed) {
  nlohmann::json body = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  auto name = body.is_object() ? body.find("name") : body.end();
  if (!body.is_object() || name == body.end() || !(name->is_string() || name->is_null())) {
    return SetErrorResponse(res, Status::Error(ErrorCode::kInvalidArgument,
                                               "expected {\"name\": \"<profile>\"} or "
                                               "{\"name\": null}"));
  }
  const std::string wanted = name->is_null() ? "" : name->get<std::string>();
  if (Status set = routing.SetProfile(wanted); !set.ok()) return SetErrorResponse(res, set);
  spdlog::info("profile: {}", wanted.empty() ? "none active" : wanted + " active");
  if (changed) changed();
  res.SetBody(JsonText(nlohmann::json{{"active", NameOrNull(wanted)}}), "application/json");
}

}  // namespace

void AddProfileRoutes(FrontDoor& door, std::function<void()> changed) {
  door.AddRoute("GET", "/api/profiles",
                [&door](const HttpRequest&, HttpResponse& res, RequestContext&) {
                  ListProfiles(door.routing(), res);
                });
  door.AddRoute("PUT", "/api/profiles/active",
                [&door, changed = std::move(changed)](const HttpRequest& req, HttpResponse& res,
                                                      RequestContext&) {
                  SetProfile(door.routing(), req, res, changed);
                });
}

}  // namespace swapd
