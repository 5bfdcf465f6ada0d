#include "frontdoor/routing.h"

#include <vector>

#include "frontdoor/selector_choice.h"

namespace swapd {
namespace {

// Whether `a` and `b` share one Config (a weak_ptr keeps its control block, so a new Config at
// the address of a freed one is never taken for it).
bool Same(const std::weak_ptr<const Config>& a, const std::shared_ptr<const Config>& b) {
  return !a.owner_before(b) && !b.owner_before(a);
}

}  // namespace

Routing::Routing(const LiveConfig& live, const Router& router) : live_(live), router_(router) {}

Routing::Now Routing::Current() const {
  Now now{live_.Current(), ""};
  std::lock_guard lock(mu_);
  if (Same(profile_config_, now.config)) now.profile = profile_;
  return now;
}

Status Routing::SetProfile(const std::string& name) {
  const std::shared_ptr<const Config> config = live_.Current();
  if (!name.empty() && config->profiles.count(name) == 0) {
    return Status::Error(ErrorCode::kNotFound, "profile \"" + name + "\" not found");
  }
  std::lock_guard lock(mu_);
  profile_ = name;
  profile_config_ = config;
  return Status::Ok();
}

ResolvedModel Routing::Resolve(const Now& now, const std::string& requested) {
  ResolvedModel r = ResolveModel(*now.config, now.profile, requested);
  if (r.selector == nullptr) return r;
  std::map<std::string, TargetLoad> by_model;
  for (const ModelSnapshot& m : router_.Snapshot()) {
    by_model[m.id] = TargetLoad{m.backend.state, m.in_flight + m.queued};
  }
  std::vector<TargetLoad> loads;
  for (const std::string& target : r.selector->targets) {
    if (const ModelConfig* model = now.config->FindModel(target)) {
      loads.push_back(by_model[model->id]);
    } else if (const PeerModelRef* peer = now.config->FindPeerModel(target)) {
      loads.push_back(TargetLoad{BackendState::kStopped, PeerInFlight(peer->id())});
    } else {
      loads.push_back(TargetLoad{});
    }
  }
  const std::string& target = r.selector->targets[ChooseTarget(*r.selector, loads, round_robin_)];
  if (const ModelConfig* model = now.config->FindModel(target)) return {model, target};
  return {nullptr, target, nullptr, now.config->FindPeerModel(target)};
}

void Routing::PeerRequestBegan(const std::string& id) {
  std::lock_guard lock(mu_);
  ++peer_in_flight_[id];
}

void Routing::PeerRequestEnded(const std::string& id) {
  std::lock_guard lock(mu_);
  if (--peer_in_flight_[id] <= 0) peer_in_flight_.erase(id);
}

int Routing::PeerInFlight(const std::string& id) const {
  std::lock_guard lock(mu_);
  auto it = peer_in_flight_.find(id);
  return it == peer_in_flight_.end() ? 0 : it->second;
}

}  // namespace swapd
