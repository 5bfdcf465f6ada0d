#include "daemon/event_feed.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "frontdoor/model_list.h"

namespace swapd {
namespace {

// How often the feed looks while there are readers, and sends a loading model's progress.
constexpr auto kWatchedPoll = std::chrono::milliseconds(100);
constexpr auto kProgressEvery = std::chrono::milliseconds(500);
// With no reader, only a poke wakes it; this bounds the wait anyway.
constexpr auto kIdlePoll = std::chrono::minutes(10);

double Seconds(EventFeed::Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// {model, stage, progress, eta_seconds}: a start's progress is its elapsed time against the
// model's previous load (capped below 1 until it is ready); null when no load is known yet.
nlohmann::json LoadingJson(const std::string& model, const std::string& stage,
                           EventFeed::Clock::duration elapsed,
                           std::optional<EventFeed::Clock::duration> expected) {
  nlohmann::json progress = nullptr;
  nlohmann::json eta = nullptr;
  if (stage == "ready") {
    progress = 1.0;
    eta = 0.0;
  } else if (stage == "starting" && expected && expected->count() > 0) {
    progress = std::min(0.99, Seconds(elapsed) / Seconds(*expected));
    eta = std::max(0.0, Seconds(*expected - elapsed));
  }
  return {{"model", model}, {"stage", stage}, {"progress", progress}, {"eta_seconds", eta}};
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
    if (backend.state == BackendState::kFailed && !backend.last_error.empty()) {
      item["last_error"] = backend.last_error;
    }
    models.push_back(std::move(item));
  }
  for (const auto& [peer_id, peer] : config.peers) {
    for (const std::string& model : peer.models) {
      models.push_back({{"id", peer_id + "/" + model},
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

EventFeed::EventFeed(Router& router, const FrontDoor& door, EventHub& hub)
    : router_(router), door_(door), hub_(hub) {
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
    if (ok) last_load_[model] = took;
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
    const bool watched = hub_.readers() > 0;
    wake_.wait_for(lock, watched ? kWatchedPoll : kIdlePoll, [&] { return poked_ || stop_; });
    if (stop_) break;
    poked_ = false;
    // What to tell, taken under the lock and told without it.
    const auto now = Clock::now();
    std::vector<nlohmann::json> loads;
    for (const Load& load : reported_) {
      auto expected = last_load_.find(load.model);
      loads.push_back(LoadingJson(load.model, load.stage, now - load.began,
                                  load.stage == "starting" && expected != last_load_.end()
                                      ? std::optional(expected->second)
                                      : std::nullopt));
    }
    reported_.clear();
    std::vector<nlohmann::json> stops;
    stops.swap(stops_);
    if (watched && now >= next_progress_) {
      next_progress_ = now + kProgressEvery;
      for (const auto& [model, began] : loading_) {
        auto expected = last_load_.find(model);
        loads.push_back(LoadingJson(
            model, "starting", now - began,
            expected == last_load_.end() ? std::nullopt : std::optional(expected->second)));
      }
    }
    lock.unlock();
    for (const nlohmann::json& stop : stops) hub_.Publish("stopping", stop);
    PublishStates();
    for (const nlohmann::json& load : loads) hub_.Publish("loading", load);
    lock.lock();
  }
}

void EventFeed::PublishStates() {
  auto [config, profile] = door_.routing();
  nlohmann::json status = ModelStatusJson(*config, router_.Snapshot());
  std::string text = status.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text != last_status_) {
    hub_.PublishState("modelStatus", status);
    last_status_ = std::move(text);
  }
  // Sent on connect as llama-swap does, and again when a reload changed it.
  nlohmann::json ui = UiConfigJson(*config);
  if (std::string ui_text = ui.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      ui_text != last_ui_) {
    hub_.PublishState("uiConfig", ui);
    last_ui_ = std::move(ui_text);
  }
  if (first_look_ || profile != last_profile_) {
    hub_.PublishState("profileChanged", {{"active", profile.empty() ? nlohmann::json(nullptr)
                                                                    : nlohmann::json(profile)}});
    last_profile_ = profile;
    first_look_ = false;
  }
}

}  // namespace swapd
