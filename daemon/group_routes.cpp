// The Groups page's API. GET /api/groups: the config's groups ({id, swap, exclusive, persistent,
// members: [{id, state}]}; ungrouped models form "(default)"). GET /api/plan?model=: what a request
// for a model (id or alias) would do now, asked of the Scheduler without changing anything:
// {model, state, evict: [{model, reason}], matrix, refused}.
#include <nlohmann/json.hpp>

#include "daemon/ui_routes.h"
#include "frontdoor/error_response.h"
#include "frontdoor/profiles.h"

namespace swapd {
namespace {

using nlohmann::json;

std::string StateOf(const std::vector<ModelSnapshot>& snapshot, const std::string& id) {
  for (const ModelSnapshot& m : snapshot) {
    if (m.id == id) return ToString(m.backend.state);
  }
  return "stopped";
}

json GroupsJson(const Config& config, const std::vector<ModelSnapshot>& snapshot) {
  json groups = json::array();
  for (const auto& [name, group] : config.groups) {
    json members = json::array();
    for (const std::string& id : group.members) {
      members.push_back({{"id", id}, {"state", StateOf(snapshot, id)}});
    }
    groups.push_back({{"id", name},
                      {"swap", group.swap},
                      {"exclusive", group.exclusive},
                      {"persistent", group.persistent},
                      {"members", members}});
  }
  return groups;
}

// Why the group rules stop `other` for `model`, in the config's words.
std::string GroupReason(const Config& config, const std::string& model, const std::string& other) {
  const std::string& mine = config.models.at(model).group;
  auto theirs = config.models.find(other);
  if (theirs == config.models.end()) return "it is no longer in the config";
  if (theirs->second.group == mine) {
    return "same group \"" + mine + "\", whose members swap (swap: true)";
  }
  if (mine == kDefaultGroup) {
    return "\"" + model +
           "\" is in no group, and ungrouped models are exclusive: loading one stops "
           "the other groups";
  }
  return "group \"" + mine + "\" is exclusive: loading a member stops the other groups";
}

json PlanJson(const Config& config, const std::string& model, const Scheduler::Preview& p) {
  json evict = json::array();
  for (const std::string& other : p.evict) {
    std::string reason = p.by_budget.contains(other) ? "memory budget: " + p.budget_why
                         : !p.matrix.empty()         ? p.matrix
                                                     : GroupReason(config, model, other);
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
  door.AddRoute("GET", "/api/groups",
                [&door, &router](const HttpRequest&, HttpResponse& res, RequestContext&) {
                  res.SetBody(
                      json{{"groups", GroupsJson(*door.config(), router.Snapshot())}}.dump(),
                      "application/json");
                });
  door.AddRoute("GET", "/api/plan",
                [&door, &router](const HttpRequest& req, HttpResponse& res, RequestContext&) {
                  const std::string requested(req.Param("model").value_or(""));
                  auto [config, profile] = door.routing();
                  const ResolvedModel resolved = ResolveModel(*config, profile, requested);
                  if (resolved.model == nullptr) {
                    return SetErrorResponse(
                        res, Status::Error(ErrorCode::kNotFound,
                                           requested.empty()
                                               ? std::string("expected ?model=<model id or alias>")
                                               : "no local model \"" + requested + "\""));
                  }
                  const std::string& id = resolved.model->id;
                  res.SetBody(PlanJson(*config, id, router.Preview(id)).dump(), "application/json");
                });
}

}  // namespace swapd
