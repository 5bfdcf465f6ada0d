// The FrontDoor's peers: a request for a peer's model handed to the proxy (nothing local is
// started or stopped for it), the peers' models in /v1/models, and GET /api/peers. Same threading
// rules as front_door.cpp.
#include <chrono>

#include "base/json_text.h"
#include "base/proxy_url.h"
#include "frontdoor/error_response.h"
#include "frontdoor/front_door.h"
#include "frontdoor/model_list.h"

namespace swapd {
namespace {

using namespace std::chrono_literals;

// Seconds from now to `when`, rounded up; 0 when it has passed.
int64_t SecondsUntil(std::chrono::steady_clock::time_point when) {
  const auto left = when - std::chrono::steady_clock::now();
  return left <= 0s ? 0 : std::chrono::ceil<std::chrono::seconds>(left).count();
}

// An idle keep-alive connection to a peer is kept this long unless its timeouts.idleConn says
// otherwise (llama-swap's default).
constexpr std::chrono::seconds kPeerIdleConn{90};

}  // namespace

void FrontDoor::DispatchToPeer(const Config& config, const PeerModelRef& ref,
                               const HttpRequest& req, std::string_view target,
                               std::string_view body, HttpResponse& res, RequestContext& ctx) {
  const PeerConfig& peer = config.peers.at(ref.peer);
  const std::string id = peer.id + "/" + ref.model;
  const std::string route = req.path.rfind("/upstream/", 0) == 0 ? "/upstream" : req.path;
  if (std::optional<PeerHealth> health = peers_->Health(peer.id);
      health && health->state == PeerHealth::State::kDown) {
    // Known down: a fast answer instead of a connect timeout, and a check at once so that a peer
    // that is back is noticed by the retry.
    peers_->CheckSoon(peer.id);
    const int64_t retry = std::max<int64_t>(1, SecondsUntil(health->next_check));
    SetErrorResponse(
        res, Status::Error(ErrorCode::kUnavailable,
                           "peer \"" + peer.id + "\" (" + peer.proxy +
                               ") is down: " + health->detail + "; model \"" + id +
                               "\" cannot be reached; retry in " + std::to_string(retry) + " s"));
    res.headers.Set("Retry-After", std::to_string(retry));
    Refused(id, route, req, res, "peer \"" + peer.id + "\" is down: " + health->detail,
            std::chrono::steady_clock::now());
    return;
  }
  HttpHeaders headers = req.headers;
  if (!peer.api_key.empty()) {  // the peer's key replaces whatever the client sent
    headers.Set("Authorization", "Bearer " + peer.api_key);
    headers.Set("x-api-key", peer.api_key);
  }
  ProxyRequest request;
  request.inflight = Track(req, id, target);
  request.method = req.method;
  request.target = target;
  request.headers = &headers;
  request.body = body;
  request.route = route;
  request.path = req.path;
  request.client_body = req.body;
  request.capture_limit = CaptureBufferBytes(config.capture_buffer_mb);
  UpstreamTarget upstream;
  upstream.id = id;
  upstream.peer = peer.id;
  upstream.url = ParseProxyUrl(peer.proxy);
  upstream.timeouts = ConnectionTimeouts(peer.timeouts, settings_.upstream_idle_timeout);
  upstream.idle_conn = peer.timeouts.idle_conn.value_or(kPeerIdleConn);
  {
    std::lock_guard lock(peer_flight_mu_);
    ++peer_in_flight_[id];  // until the exchange's record (see the constructor)
  }
  proxy_->Forward(std::move(upstream), request, res, ctx);
}

void FrontDoor::AddPeerModels(const Config& config, int64_t created,
                              std::map<std::string, nlohmann::json>& sorted) {
  // As llama-swap: "<peer>/<model>", named "<peer>: <model>", never loaded.
  for (const auto& [id, peer] : config.peers) {
    for (const std::string& model : peer.models) {
      const std::string fqn = id + "/" + model;
      nlohmann::json item = ModelListEntry(config, fqn, created, false);
      item["name"] = id + ": " + model;
      item["meta"]["llamaswap"] = {{"type", "peer"}, {"peerID", id}};
      sorted[fqn] = std::move(item);
    }
  }
}

void FrontDoor::HandleListPeers(HttpResponse& res) {
  auto cfg = config();
  const std::map<std::string, PeerHealth> health = peers_->All();
  nlohmann::json peers = nlohmann::json::array();
  for (const auto& [id, peer] : cfg->peers) {
    auto h = health.find(id);
    const PeerHealth state = h != health.end() ? h->second : PeerHealth{};
    nlohmann::json item = {{"id", id},
                           {"proxy", peer.proxy},
                           {"models", peer.models},
                           {"state", ToString(state.state)},
                           {"latency_ms", nullptr},
                           {"checked_at", nullptr},
                           {"next_check_s", SecondsUntil(state.next_check)},
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
  res.SetBody(JsonText(nlohmann::json{{"peers", peers}}), "application/json");
}

}  // namespace swapd
