// EventFeed: what GET /api/events tells about models and profiles. A thread of its own turns the
// Router's snapshot, the configuration's ui settings and the front door's active profile into the
// modelStatus, uiConfig and profileChanged states (published only when they change), and the loads
// the Router reports into `loading` events: {model, stage: starting|ready|failed, progress 0..1,
// eta_seconds}, estimated from the model's previous load time in this run (null until one is
// known), and its stops into `stopping` events: {model, reason}. It looks when poked (a start, a
// stop, a crash, a reload, a profile change, a new reader) and, while there are readers, every 100
// ms: a backend turns starting or stopping between the Router's events.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "backends/router.h"
#include "daemon/event_hub.h"
#include "frontdoor/front_door.h"

namespace swapd {

// modelStatus's data, as llama-swap sends it: every configured model sorted by id ({id, name,
// description, state, unlisted, peerID, aliases?, capabilities?, context_length?}), then each
// peer's models ("<peer>/<model>", state ""). `state` is stopped|starting|ready|stopping; a model
// whose start failed is "stopped" and carries `last_error`.
nlohmann::json ModelStatusJson(const Config& config, const std::vector<ModelSnapshot>& snapshot);

// uiConfig's data, as llama-swap sends it: {activity: {session_id: [header names]}}.
nlohmann::json UiConfigJson(const Config& config);

class EventFeed {
 public:
  using Clock = std::chrono::steady_clock;

  EventFeed(Router& router, const FrontDoor& door, EventHub& hub);
  ~EventFeed();  // stops the thread
  EventFeed(const EventFeed&) = delete;
  EventFeed& operator=(const EventFeed&) = delete;

  // Something changed: look now. Quick; never calls the Router (safe from its events).
  void Poke();
  // A model's start began / ended (RouterEvents). Quick, as Poke.
  void LoadStarted(const std::string& model);
  void LoadFinished(const std::string& model, bool ok, Clock::duration took);
  // A stop began (RouterEvents::on_stop: group, matrix, budget, ttl, unload, reload, shutdown):
  // a `stopping` event {model, reason}. Quick, as Poke.
  void Stopping(const std::string& model, const char* reason);

 private:
  struct Load {
    std::string model;
    std::string stage;        // starting | ready | failed
    Clock::time_point began;  // of the start
  };

  void Loop();
  void PublishStates();  // on the thread

  Router& router_;
  const FrontDoor& door_;
  EventHub& hub_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool poked_ = true;                                 // Guarded by mu_; the first look is at once
  bool stop_ = false;                                 // Guarded by mu_
  std::map<std::string, Clock::time_point> loading_;  // Guarded by mu_; model -> start began
  std::vector<nlohmann::json> stops_;                 // Guarded by mu_; begun since the last look
  std::vector<Load> reported_;  // Guarded by mu_; begun or ended since the last look
  std::map<std::string, Clock::duration> last_load_;  // Guarded by mu_; the last ready's
  // The thread's own:
  std::string last_status_;
  std::string last_ui_;
  std::string last_profile_;
  bool first_look_ = true;
  Clock::time_point next_progress_;
  std::thread thread_;
};

}  // namespace swapd
