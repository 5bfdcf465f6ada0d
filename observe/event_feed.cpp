#include "observe/event_feed.h"

#include <algorithm>
#include <optional>
#include <utility>

#include <spdlog/spdlog.h>

#include "base/json_text.h"
#include "base/unix_time.h"
#include "frontdoor/model_list.h"

namespace swapd {
namespace {

// How often the feed looks while there are readers, and sends a loading model's progress.
constexpr auto kWatchedPoll = std::chrono::milliseconds(100);
constexpr auto kProgressEvery = std::chrono::milliseconds(500);
// With no reader, only a poke wakes it; this bounds the wait anyway.
constexpr auto kIdlePoll = std::chrono::minutes(10);

nlohmann::json OrNull(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// {model, stage, progress, eta_seconds} of a start under way: what its output says, against its
// expected load time.
nlohmann::json LoadingJson(const ModelSnapshot& s, EventFeed::Clock::duration elapsed) {
  const LoadProgress& parsed = s.backend.load;
  const LoadEstimate estimate =
      EstimateLoad(parsed, std::chrono::duration_cast<std::chrono::milliseconds>(elapsed),
                   s.expected_load.count() > 0 ? std::optional(s.expected_load) : std::nullopt);
  return {{"model", s.id},
          {"stage", estimate.stage},
          {"progress", OrNull(estimate.progress)},
          {"eta_seconds", OrNull(estimate.eta_seconds)}};
}

// The start and end of a load, as the Router reported them.
nlohmann::json LoadingJson(const std::string& model, const std::string& stage) {
  const bool ready = stage == "ready";
  return {{"model", model},
          {"stage", stage},
          {"progress", ready ? nlohmann::json(1.0) : nlohmann::json(nullptr)},
          {"eta_seconds", ready ? nlohmann::json(0.0) : nlohmann::json(nullptr)}};
}

std::string LlamaSwapState(BackendState state) {
  // llama-swap's states have no "failed": a failed start left no process.
  return state == BackendState::kFailed ? "stopped" : ToString(state);
}

}  // namespace

nlohmann::json ModelStatusJson(const Config& config, const std::vector<ModelSnapshot>& snapshot) {
  std::map<std::string, const ModelSnapshot*> by_id;
  for (const ModelSnapshot& m : snapshot) by_id[m.id] = &m;
  nlohmann::json models = nlohmann::json::array();
  for (const auto& [id, model] : config.models) {  // a std::map: sorted by id
    auto seen = by_id.find(id);
    const BackendInfo backend = seen == by_id.end() ? BackendInfo{} : seen->second->backend;
    nlohmann::json item = {{"id", id},
                           {"name", model.name},
                           {"description", model.description},
                           {"state", LlamaSwapState(backend.state)},
                           {"unlisted", model.unlisted},
                           {"peerID", ""}};
    if (!model.aliases.empty()) item["aliases"] = model.aliases;
    if (model.capabilities) {
      nlohmann::json entry;
      AddCapabilities(*model.capabilities, entry);
      item["capabilities"] = entry["capabilities"];
      if (entry.contains("context_length")) item["context_length"] = entry["context_length"];
    }
    // The port its running backend was given for ${PORT} (not llama-swap's): it differs from the
    // configured one when that was taken.
    if (backend.port != 0) item["port"] = backend.port;
    if (backend.state == BackendState::kFailed && !backend.last_error.empty()) {
      item["last_error"] = backend.last_error;
    }
    models.push_back(std::move(item));
  }
  for (const auto& [peer_id, peer] : config.peers) {
    for (const std::string& model : peer.models) {
      models.push_back({{"id", PeerModelId(peer_id, model)},
                        {"name", ""},
                        {"description", ""},
                        {"state", ""},
                        {"unlisted", false},
                        {"peerID", peer_id}});
    }
  }
  return models;
}

nlohmann::json UiConfigJson(const Config& config) {
  return {{"activity", {{"session_id", config.ui.session_id_headers}}}};
}

EventFeed::EventFeed(Router& router, const Routing& routing, EventHub& hub,
                     LoadTimeStore* load_times)
    : router_(router), routing_(routing), hub_(hub), load_times_(load_times) {
  // Kept before the server takes its first reader, who gets them on connect (from the thread, a
  // reader quicker than its first look got them after its inflight snapshot).
  PublishStates();
  thread_ = std::thread([this] { Loop(); });
}

EventFeed::~EventFeed() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void EventFeed::Poke() {
  {
    std::lock_guard lock(mu_);
    poked_ = true;
  }
  wake_.notify_all();
}

void EventFeed::LoadStarted(const std::string& model) {
  {
    std::lock_guard lock(mu_);
    const auto now = Clock::now();
    loading_[model] = now;
    reported_.push_back(Load{model, "starting", now});
    poked_ = true;
  }
  wake_.notify_all();
}

void EventFeed::LoadFinished(const std::string& model, bool ok, Clock::duration took) {
  {
    std::lock_guard lock(mu_);
    loading_.erase(model);
    if (ok) {
      finished_.push_back(Took{model, std::chrono::duration_cast<std::chrono::milliseconds>(took)});
    }
    reported_.push_back(Load{model, ok ? "ready" : "failed", Clock::now() - took});
    poked_ = true;
  }
  wake_.notify_all();
}

void EventFeed::Stopping(const std::string& model, const char* reason) {
  {
    std::lock_guard lock(mu_);
    stops_.push_back({{"model", model}, {"reason", reason}});
    poked_ = true;
  }
  wake_.notify_all();
}

void EventFeed::Loop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    const bool watched = hub_.Watched("loading");
    wake_.wait_for(lock, watched ? kWatchedPoll : kIdlePoll, [&] { return poked_ || stop_; });
    if (stop_) break;
    poked_ = false;
    // What to tell, taken under the lock and told without it.
    const auto now = Clock::now();
    std::vector<nlohmann::json> loads;
    for (const Load& load : reported_) loads.push_back(LoadingJson(load.model, load.stage));
    reported_.clear();
    std::vector<nlohmann::json> stops;
    stops.swap(stops_);
    std::vector<Took> finished;
    finished.swap(finished_);
    std::map<std::string, Clock::time_point> progress;
    if (watched && now >= next_progress_) {
      next_progress_ = now + kProgressEvery;
      progress = loading_;
    }
    lock.unlock();
    KeepLoadTimes(finished);
    for (const nlohmann::json& stop : stops) hub_.Publish("stopping", stop);
    const std::vector<ModelSnapshot> snapshot = PublishStates();
    for (const nlohmann::json& load : loads) hub_.Publish("loading", load);
    for (const ModelSnapshot& s : snapshot) {
      auto began = progress.find(s.id);
      if (began == progress.end() || s.backend.state != BackendState::kStarting) continue;
      hub_.Publish("loading", LoadingJson(s, now - began->second));
    }
    lock.lock();
  }
}

void EventFeed::KeepLoadTimes(const std::vector<Took>& loads) {
  if (load_times_ == nullptr) return;
  auto [config, profile] = routing_.Current();
  (void)profile;
  auto definition = [&config = *config](const std::string& model) -> const std::string* {
    auto it = config.models.find(model);
    return it == config.models.end() ? nullptr : &it->second.slot_key;
  };
  auto tell_router = [&](const std::string& model) {
    const std::string* key = definition(model);
    if (key == nullptr) return;
    auto expected = load_times_->Expected(model, *key);
    if (!expected.ok()) {
      spdlog::warn("{}", expected.status().message());
    } else if (expected.value()) {
      router_.SetExpectedLoad(model, *expected.value());
    }
  };
  for (const Took& load : loads) {
    const std::string* key = definition(load.model);
    if (key == nullptr) continue;
    if (Status kept = load_times_->Record(load.model, *key, load.took, UnixNow()); !kept.ok()) {
      spdlog::warn("{}; this load time is not kept", kept.message());
    }
    tell_router(load.model);
  }
  if (seeded_for_ != config) {  // the first look, or a reload: every model's expected time
    seeded_for_ = config;
    for (const auto& [id, model] : config->models) tell_router(id);
  }
}

std::vector<ModelSnapshot> EventFeed::PublishStates() {
  auto [config, profile] = routing_.Current();
  std::vector<ModelSnapshot> snapshot = router_.Snapshot();
  nlohmann::json status = ModelStatusJson(*config, snapshot);
  std::string text = JsonText(status);
  // As llama-swap: a profile change sends profileChanged, then modelStatus (the UI's pickers
  // read the pins again on it). A reader that connects gets modelStatus, uiConfig,
  // profileChanged: the order they were first published in.
  const bool profile_changed = !first_look_ && profile != last_profile_;
  if (text != last_status_ && !profile_changed) {
    hub_.PublishState("modelStatus", status);
    last_status_ = std::move(text);
  }
  // Sent on connect as llama-swap does, and again when a reload changed it.
  nlohmann::json ui = UiConfigJson(*config);
  if (std::string ui_text = JsonText(ui); ui_text != last_ui_) {
    hub_.PublishState("uiConfig", ui);
    last_ui_ = std::move(ui_text);
  }
  if (first_look_ || profile_changed) {
    hub_.PublishState("profileChanged", {{"active", profile.empty() ? nlohmann::json(nullptr)
                                                                    : nlohmann::json(profile)}});
    last_profile_ = profile;
    first_look_ = false;
  }
  if (profile_changed) {
    hub_.PublishState("modelStatus", status);
    last_status_ = std::move(text);
  }
  return snapshot;
}

}  // namespace swapd
