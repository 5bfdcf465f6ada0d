#include "api/status_routes.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "api/memory_json.h"
#include "base/json_text.h"

namespace swapd {
namespace {

// How many of a backend's last output lines GET /api/models shows.
constexpr size_t kApiModelsLogLines = 20;

nlohmann::json Lines(const std::string& text) {
  nlohmann::json lines = nlohmann::json::array();
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

nlohmann::json ApiModels(const Router& router, const Metrics& metrics, const Config& config_now,
                         const FootprintMonitor& memory) {
  nlohmann::json models = nlohmann::json::array();
  const MemoryView view = memory.View();
  const Config* config = &config_now;
  const auto now = std::chrono::steady_clock::now();
  std::vector<ModelSnapshot> snapshot = router.Snapshot();
  std::sort(snapshot.begin(), snapshot.end(),
            [](const ModelSnapshot& x, const ModelSnapshot& y) { return x.id < y.id; });
  for (const auto& m : snapshot) {
    const bool ready = m.backend.state == BackendState::kReady;
    ModelCounters counters = metrics.Counters(m.id);
    nlohmann::json item = {
        {"id", m.id},
        {"state", ToString(m.backend.state)},
        {"pid", m.backend.pid},
        {"uptime_seconds",
         ready ? std::chrono::duration<double>(now - m.backend.since).count() : 0.0},
        {"last_error", m.backend.last_error},
        {"last_log_lines", Lines(router.LogTail(m.id, kApiModelsLogLines))},
        {"in_flight", m.in_flight},
        {"queued", m.queued},
        {"generation_tokens_per_second", counters.last_generation_tps},
        {"prompt_tokens_per_second", counters.last_prompt_tps},
        {"starts", counters.starts},
        {"start_failures", counters.start_failures},
        {"crashes", counters.crashes},
        // Its last successful start in this run, start to ready (what `swapd bench --swap` reads).
        {"last_load_seconds", m.last_load.count() > 0
                                  ? nlohmann::json(static_cast<double>(m.last_load.count()) / 1000)
                                  : nlohmann::json(nullptr)}};
    auto definition = config->models.find(m.id);
    // A hash of the model's cmd and env (ModelConfig::slot_key): `swapd bench` stores it with
    // each result so that a changed definition shows in --compare.
    item["definition"] =
        definition == config->models.end() ? std::string() : definition->second.slot_key;
    // Its cmd uses ${SLOT_DIR}: its slots are saved when it stops and restored when it starts.
    item["slot_cache"] = definition != config->models.end() && !definition->second.slot_dir.empty();
    // Where its requests go now (its ${PORT} moves off a port that was taken); null for a model a
    // reload removed.
    if (definition != config->models.end()) {
      item["proxy"] = ProxyInUse(definition->second, m.backend);
      item["port"] = PortInUse(definition->second, m.backend);
    } else {
      item["proxy"] =
          m.backend.proxy.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.backend.proxy);
      item["port"] = m.backend.port == 0 ? nlohmann::json(nullptr) : nlohmann::json(m.backend.port);
    }
    auto measured = view.models.find(m.id);
    item["memory"] =
        ModelMemoryJson(definition == config->models.end() ? nullptr : &definition->second, m,
                        measured == view.models.end() ? nullptr : &measured->second);
    models.push_back(std::move(item));
  }
  return {{"models", models}, {"memory", MemorySummaryJson(router.Budget(), snapshot, view)}};
}

}  // namespace

void AddStatusRoutes(FrontDoor& door, const Router& router, const Metrics& metrics,
                     const FootprintMonitor& memory) {
  door.AddRoute(
      "GET", "/api/models",
      [&router, &metrics, &door, &memory](const HttpRequest&, HttpResponse& res, RequestContext&) {
        res.SetBody(JsonText(ApiModels(router, metrics, *door.routing().config(), memory)),
                    "application/json");
      });
  door.AddRoute("GET", "/api/version", [](const HttpRequest&, HttpResponse& res, RequestContext&) {
    res.SetBody(nlohmann::json{{"version", SWAPD_VERSION},
                               {"commit", SWAPD_COMMIT},
                               {"build_date", SWAPD_BUILD_DATE},
                               // `swapd bench --url` on the same machine leaves swapd's process
                               // tree out of its quiet-machine guard.
                               {"pid", static_cast<int>(getpid())}}
                    .dump(),
                "application/json");
  });
}

}  // namespace swapd
