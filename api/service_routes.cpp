#include "api/service_routes.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "api/memory_json.h"
#include "base/json_text.h"
#include "frontdoor/error_response.h"
#include "memory/footprint_monitor.h"
#include "observe/metrics.h"

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

nlohmann::json ApiModels(const Router& router, const Metrics& metrics, const FrontDoor& door,
                         const FootprintMonitor& memory) {
  nlohmann::json models = nlohmann::json::array();
  const MemoryView view = memory.View();
  const std::shared_ptr<const Config> config = door.config();
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
        {"crashes", counters.crashes}};
    auto definition = config->models.find(m.id);
    // A hash of the model's cmd and env (ModelConfig::slot_key): `swapd bench` stores it with
    // each result so that a changed definition shows in --compare.
    item["definition"] =
        definition == config->models.end() ? std::string() : definition->second.slot_key;
    auto measured = view.models.find(m.id);
    item["memory"] =
        ModelMemoryJson(definition == config->models.end() ? nullptr : &definition->second, m,
                        measured == view.models.end() ? nullptr : &measured->second);
    models.push_back(std::move(item));
  }
  return {{"models", models}, {"memory", MemorySummaryJson(router.Budget(), snapshot, view)}};
}

// The body of POST /api/config/reload: {"status": "ok", "added": [...], "removed": [...],
// "changed": [...], "unchanged": [...], "diagnostics": [...]}, or when the configuration has
// errors an OpenAI-shaped error whose "error" object also carries "diagnostics".
nlohmann::json ReloadOutcomeJson(const ReloadOutcome& outcome) {
  nlohmann::json diagnostics = nlohmann::json::array();
  for (const auto& d : outcome.diagnostics) diagnostics.push_back(ToJson(d));
  if (!outcome.ok) {
    nlohmann::json body = nlohmann::json::parse(ErrorJson(
        Status::Error(ErrorCode::kInvalidArgument,
                      "the new configuration has errors; the running configuration is unchanged")));
    body["error"]["diagnostics"] = std::move(diagnostics);
    return body;
  }
  return {{"status", "ok"},
          {"added", outcome.diff.added},
          {"removed", outcome.diff.removed},
          {"changed", outcome.diff.changed},
          {"unchanged", outcome.diff.unchanged},
          {"diagnostics", std::move(diagnostics)}};
}

}  // namespace

void AddServiceRoutes(FrontDoor& door, Router& router, Metrics& metrics,
                      const FootprintMonitor& memory, std::function<std::string()> more_metrics,
                      std::function<ReloadOutcome()> reload) {
  door.AddRoute("GET", "/metrics",
                [&router, &metrics, &memory, more_metrics = std::move(more_metrics)](
                    const HttpRequest&, HttpResponse& res, RequestContext&) {
                  const std::vector<ModelSnapshot> snapshot = router.Snapshot();
                  res.SetBody(metrics.RenderPrometheus(snapshot) +
                                  memory.RenderPrometheus(snapshot) +
                                  (more_metrics ? more_metrics() : ""),
                              "text/plain; version=0.0.4");
                });
  door.AddRoute(
      "GET", "/api/models",
      [&router, &metrics, &door, &memory](const HttpRequest&, HttpResponse& res, RequestContext&) {
        res.SetBody(JsonText(ApiModels(router, metrics, door, memory)), "application/json");
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
  door.AddRoute(
      "POST", "/api/config/reload",
      [reload = std::move(reload)](const HttpRequest&, HttpResponse& res, RequestContext& ctx) {
        if (!reload) {
          return SetErrorResponse(res, Status::Error(ErrorCode::kUnavailable,
                                                     "reloading is not available in this server"));
        }
        ctx.WillBlock();  // a reload may stop models
        ReloadOutcome outcome = reload();
        res.status = outcome.ok ? 200 : 400;
        res.SetBody(JsonText(ReloadOutcomeJson(outcome)), "application/json");
      });
}

}  // namespace swapd
