// EventFeed: what GET /api/events tells about models and profiles. A thread of its own turns the
// Router's snapshot, the configuration's ui settings and the active profile (Routing) into the
// modelStatus, uiConfig and profileChanged states (published only when they change), and the loads
// the Router reports into `loading` events: {model, stage, progress 0..1, eta_seconds}. `stage` is
// "starting" when a start begins, then, while it goes on, what the backend's output says
// (metadata, tensors, context, warmup: backends/load_progress.h; "starting" while it says nothing
// parseable), and "ready" or "failed" at the end. progress and eta_seconds come from that output
// and from the model's expected load time (null while neither tells). The load times are kept in
// the LoadTimeStore (written on this thread, never in the Router's events) and handed to the
// Router as each model's expected time (Router::SetExpectedLoad), so that the first load after a
// restart has one. Stops become `stopping` events: {model, reason}. It looks when poked (a start,
// a stop, a crash, a reload, a profile change, a new reader) and, while there are readers, every
// 100 ms: a backend turns starting or stopping between the Router's events.
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
#include "frontdoor/routing.h"
#include "observe/event_hub.h"
#include "store/load_time_store.h"

namespace swapd {

// modelStatus's data, as llama-swap sends it: every configured model sorted by id ({id, name,
// description, state, unlisted, peerID, aliases?, capabilities?, context_length?}), then each
// peer's models ("<peer>/<model>", state ""). `state` is stopped|starting|ready|stopping; a model
// whose start failed is "stopped" and carries `last_error`; a running model whose cmd uses ${PORT}
// carries the `port` its backend was given.
nlohmann::json ModelStatusJson(const Config& config, const std::vector<ModelSnapshot>& snapshot);

// uiConfig's data, as llama-swap sends it: {activity: {session_id: [header names]}}.
nlohmann::json UiConfigJson(const Config& config);

class EventFeed {
 public:
  using Clock = std::chrono::steady_clock;

  // `load_times` may be null (no history: the expected time is the last load in this run).
  EventFeed(Router& router, const Routing& routing, EventHub& hub,
            LoadTimeStore* load_times = nullptr);
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

  struct Took {
    std::string model;
    std::chrono::milliseconds took;
  };

  void Loop();
  // On the thread: the modelStatus, uiConfig and profileChanged states; returns the snapshot.
  std::vector<ModelSnapshot> PublishStates();
  // On the thread: records finished loads and tells the Router the expected times (all models'
  // after a reload or at the first look, else those of `loads`' models).
  void KeepLoadTimes(const std::vector<Took>& loads);

  Router& router_;
  const Routing& routing_;
  EventHub& hub_;
  LoadTimeStore* const load_times_;  // may be null
  std::mutex mu_;
  std::condition_variable wake_;
  bool poked_ = true;                                 // Guarded by mu_; the first look is at once
  bool stop_ = false;                                 // Guarded by mu_
  std::map<std::string, Clock::time_point> loading_;  // Guarded by mu_; model -> start began
  std::vector<nlohmann::json> stops_;                 // Guarded by mu_; begun since the last look
  std::vector<Load> reported_;  // Guarded by mu_; begun or ended since the last look
  std::vector<Took> finished_;  // Guarded by mu_; successful loads not yet kept
  // The thread's own:
  std::string last_status_;
  std::string last_ui_;
  std::string last_profile_;
  bool first_look_ = true;
  std::shared_ptr<const Config> seeded_for_;  // the config whose expected times the Router has
  Clock::time_point next_progress_;
  std::thread thread_;
};

}  // namespace swapd
