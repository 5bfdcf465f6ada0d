// Routing: what a model name in a request means now. It reads the live configuration and the
// active profile together (a profile is active for the configuration it was chosen under, so a
// reload deactivates it, as in llama-swap), and resolves a name: model ids, the profile's pins,
// selectors (their target chosen from the Router's view of the targets and the requests in flight
// to peers' models), aliases, peers' models (ResolveModel, profiles.h).
// Thread safe.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "backends/router.h"
#include "base/status.h"
#include "config/live_config.h"
#include "frontdoor/profiles.h"

namespace swapd {

class Routing {
 public:
  // The configuration and the active profile ("" for none) at one moment.
  struct Now {
    std::shared_ptr<const Config> config;
    std::string profile;
  };

  // Reads both; neither is owned, and both must outlive this.
  Routing(const LiveConfig& live, const Router& router);

  Now Current() const;
  std::shared_ptr<const Config> config() const { return live_.Current(); }

  // Activates profile `name` ("" for none); kNotFound when the configuration has no such profile.
  Status SetProfile(const std::string& name);

  // The model a request naming `requested` goes to under `now`, with a selector's target chosen.
  ResolvedModel Resolve(const Now& now, const std::string& requested);

  // A request to peer model `id` ("<peer>/<model>") began or ended: a peer's model counts as live
  // for spillover selectors while it has requests in flight.
  void PeerRequestBegan(const std::string& id);
  void PeerRequestEnded(const std::string& id);

 private:
  int PeerInFlight(const std::string& id) const;

  const LiveConfig& live_;
  const Router& router_;
  mutable std::mutex mu_;
  std::string profile_;                         // Guarded by mu_
  std::weak_ptr<const Config> profile_config_;  // Guarded by mu_; what profile_ was chosen under
  std::map<std::string, int> peer_in_flight_;   // Guarded by mu_
  std::atomic<size_t> round_robin_{0};  // spillover selectors' turn among equally busy targets
};

}  // namespace swapd
