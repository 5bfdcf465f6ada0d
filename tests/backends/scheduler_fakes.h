// Test helpers for the Scheduler: a fake Effects that records every effect in order, a small
// builder of Config structs (models with groups, limits and TTLs), and a harness around both.
// Single-threaded, tests only.
#pragma once

#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backends/scheduler.h"
#include "config/config.h"

namespace swapd::testing {

inline const Status kOk = Status::Ok();

class FakeEffects : public SchedulerEffects {
 public:
  void StartModel(const std::string& model) override { log_.push_back("start " + model); }
  void StopModel(const std::string& model, StopReason reason) override {
    log_.push_back("stop " + model);
    stop_reasons_[model] = ToString(reason);
  }
  void Admit(RequestId request) override { log_.push_back("admit " + std::to_string(request)); }
  void Reject(RequestId request, const Status& why) override {
    log_.push_back("reject " + std::to_string(request));
    rejected_[request] = why;
  }

  void Explain(const std::string&, const std::string& why) override { explained_.push_back(why); }

  // The effects since the last Take(), in order.
  std::vector<std::string> Take() { return std::exchange(log_, {}); }
  const Status& Rejection(RequestId request) { return rejected_.at(request); }
  // Why the model was stopped last ("swap", "ttl", ...; "" when it never was).
  std::string StopReasonOf(const std::string& model) const {
    auto it = stop_reasons_.find(model);
    return it == stop_reasons_.end() ? "" : it->second;
  }

 private:
  std::vector<std::string> log_;
  std::map<RequestId, Status> rejected_;
  std::map<std::string, std::string> stop_reasons_;

 public:
  std::vector<std::string> explained_;  // every Explain, in order
};

class ConfigBuilder {
 public:
  ConfigBuilder& Model(const std::string& id, const std::string& group = "", int limit = 10,
                       int ttl_seconds = 0) {
    ModelConfig& m = config_.models[id];
    m.id = id;
    m.group = group.empty() ? std::string(kDefaultGroup) : group;
    m.concurrency_limit = limit;
    m.ttl = std::chrono::seconds(ttl_seconds);
    m.proxy = "http://127.0.0.1:1/" + id;
    GroupConfig& g = config_.groups[m.group];
    g.name = m.group;
    g.members.push_back(id);
    return *this;
  }
  ConfigBuilder& Group(const std::string& name, bool swap, bool exclusive, bool persistent) {
    GroupConfig& g = config_.groups[name];
    g.name = name;
    g.swap = swap;
    g.exclusive = exclusive;
    g.persistent = persistent;
    return *this;
  }
  ConfigBuilder& Preload(std::vector<std::string> ids) {
    config_.preload = std::move(ids);
    return *this;
  }
  Config Build() const { return config_; }

 private:
  Config config_;
};

using Log = std::vector<std::string>;

// A Scheduler driven by hand: the fake effects, a fixed clock, and Serve to bring a model up.
struct ServingHarness {
  explicit ServingHarness(const Config& config) : scheduler(config, &effects) {}
  // Brings `model` to ready with request `id` in flight; nothing must need stopping.
  void Serve(RequestId id, const std::string& model) {
    scheduler.RequestArrived(id, model);
    REQUIRE(effects.Take() == Log{"start " + model});
    scheduler.StartFinished(model, Status::Ok(), now);
    REQUIRE(effects.Take() == Log{"admit " + std::to_string(id)});
  }
  FakeEffects effects;
  Scheduler scheduler;
  SchedulerTime now{};
};

// A Scheduler driven by hand that completes at once every stop and start a request causes.
struct SwapHarness {
  explicit SwapHarness(const Config& config) : scheduler(config, &effects) {}
  // Requests `model` as request `id` and completes the stops and the start it causes.
  void Run(RequestId id, const std::string& model) {
    scheduler.RequestArrived(id, model);
    for (const std::string& e : effects.Take()) {
      if (e.rfind("stop ", 0) == 0) scheduler.StopFinished(e.substr(5));
    }
    if (scheduler.Phase(model) == ModelPhase::kStarting) {
      scheduler.StartFinished(model, Status::Ok(), now);
    }
    effects.Take();
  }
  // Run, then the request finishes and the clock moves on a second.
  void RunAndFinish(RequestId id, const std::string& model) {
    Run(id, model);
    scheduler.RequestFinished(id, now);
    now += std::chrono::seconds(1);
  }
  FakeEffects effects;
  Scheduler scheduler;
  SchedulerTime now{};
};

}  // namespace swapd::testing
