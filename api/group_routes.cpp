// The Groups page's API. GET /api/groups: the config's groups ({id, swap, exclusive, persistent,
// members: [{id, state}]}; ungrouped models form "(default)"). GET /api/plan?model=: what a request
// for a model (id or alias) would do now, asked of the Scheduler without changing anything:
// {model, state, evict: [{model, reason}], matrix, refused}.
#include "api/group_routes.h"

#include <map>
#include <nlohmann/json.hpp>

#include "backends/scheduler_policy.h"
#include "base/json_text.h"
#include "frontdoor/error_response.h"
#include "frontdoor/profiles.h"

namespace swapd {
namespace {

using nlohmann::json;

json GroupsJson(const Config& config, const std::vector<ModelSnapshot>& snapshot) {
  std::map<std::string, std::string> states;
  for (const ModelSnapshot& m : snapshot) states[m.id] = ToString(m.backend.state);
  json groups = json::array();
  for (const auto& [name, group] : config.groups) {
    json members = json::array();
    for (const std::string& id : group.members) {
      auto state = states.find(id);
      members.push_back({{"id", id}, {"state", state == states.end() ? "stopped" : state->second}});
    }
    groups.push_back({{"id", name},
                      {"swap", group.swap},
                      {"exclusive", group.exclusive},
                      {"persistent", group.persistent},
                      {"members", members}});
  }
  return groups;
}

json PlanJson(const Config& config, const std::string& model, const Scheduler::Preview& p) {
  json evict = json::array();
  for (const std::string& other : p.evict) {
    std::string reason = p.by_budget.contains(other) ? "memory budget: " + p.budget_why
                         : !p.matrix.empty()         ? p.matrix
                                                     : ConflictReason(config, model, other);
    if (reason.empty()) reason = "it is no longer in the config";
    evict.push_back({{"model", other}, {"reason", std::move(reason)}});
  }
  return {{"model", model},
          {"state", ToString(p.phase)},
          {"evict", evict},
          {"matrix", p.matrix.empty() ? json(nullptr) : json(p.matrix)},
          {"refused", p.refusal.empty() ? json(nullptr) : json(p.refusal)}};
}

}  // namespace

void AddGroupRoutes(FrontDoor& door, Router& router) {
  door.AddRoute(
      "GET", "/api/groups",
      [&door, &router](const HttpRequest&, HttpResponse& res, RequestContext&) {
        res.SetBody(
            JsonText(json{{"groups", GroupsJson(*door.routing().config(), router.Snapshot())}}),
            "application/json");
      });
  door.AddRoute(
      "GET", "/api/plan",
      [&door, &router](const HttpRequest& req, HttpResponse& res, RequestContext&) {
        const std::string requested(req.Param("model").value_or(""));
        auto [config, profile] = door.routing().Current();
        const ResolvedModel resolved = ResolveModel(*config, profile, requested);
        if (resolved.model == nullptr) {
          return SetErrorResponse(
              res,
              Status::Error(ErrorCode::kNotFound,
                            requested.empty() ? std::string("expected ?model=<model id or alias>")
                                              : "no local model \"" + requested + "\""));
        }
        const std::string& id = resolved.model->id;
        res.SetBody(JsonText(PlanJson(*config, id, router.Preview(id))), "application/json");
      });
}

}  // namespace swapd
