#include "api/peer_routes.h"

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "base/json_text.h"

namespace swapd {
namespace {

nlohmann::json ListPeers(const Config& config, const PeerMonitor& monitor) {
  const std::map<std::string, PeerHealth> health = monitor.All();
  nlohmann::json peers = nlohmann::json::array();
  for (const auto& [id, peer] : config.peers) {
    auto h = health.find(id);
    const PeerHealth state = h != health.end() ? h->second : PeerHealth{};
    nlohmann::json item = {{"id", id},
                           {"proxy", peer.proxy},
                           {"models", peer.models},
                           {"state", ToString(state.state)},
                           {"latency_ms", nullptr},
                           {"checked_at", nullptr},
                           {"next_check_s", SecondsToNextCheck(state)},
                           {"failures", state.failures}};
    if (state.latency) item["latency_ms"] = state.latency->count();
    if (state.checked.time_since_epoch().count() != 0) {
      item["checked_at"] =
          std::chrono::duration_cast<std::chrono::seconds>(state.checked.time_since_epoch())
              .count();
    }
    if (!state.detail.empty()) item["detail"] = state.detail;
    if (state.state == PeerHealth::State::kUp) item["models_listed"] = state.models;
    peers.push_back(std::move(item));
  }
  return {{"peers", std::move(peers)}};
}

}  // namespace

void AddPeerRoutes(FrontDoor& door) {
  door.AddRoute("GET", "/api/peers",
                [&door](const HttpRequest&, HttpResponse& res, RequestContext&) {
                  res.SetBody(JsonText(ListPeers(*door.routing().config(), door.peers())),
                              "application/json");
                });
}

}  // namespace swapd
