// The service's own routes, added to the FrontDoor by the App: GET /metrics (Prometheus),
// GET /api/models (every model's state, counters, memory and last log lines; the budgets),
// GET /api/version, POST /api/config/reload, GET /api/memory/history,
// the log routes GET /logs, GET /logs/stream and GET /logs/stream/{model}, GET /api/events, and
// the request history GET /api/metrics/activity and /api/metrics/stats, GET /api/captures/{id},
// the bench scoreboard GET /api/bench.
// The handlers run on the front door's threads; what they use must outlive the FrontDoor.
#pragma once

#include <functional>
#include <memory>

#include "backends/router.h"
#include "config/diff.h"
#include "frontdoor/front_door.h"

namespace swapd {

class ActivityLog;
class BenchStore;
class CaptureStore;
class EventHub;
class FootprintMonitor;
class LogEvents;
class LogHub;
class Metrics;

// Adds /metrics, /api/models, /api/version ({version, commit, build_date, pid}) and
// POST /api/config/reload (which runs `reload`). `memory` adds the
// measured footprints and budgets to both; `more_metrics` appends its lines to /metrics.
void AddServiceRoutes(FrontDoor& door, Router& router, Metrics& metrics,
                      const FootprintMonitor& memory, std::function<std::string()> more_metrics,
                      std::function<ReloadOutcome()> reload);

// Adds /logs, /logs/stream and /logs/stream/{model}, read from `hub`.
void AddLogRoutes(FrontDoor& door, std::shared_ptr<LogHub> hub);

// Adds GET /api/events (Server-Sent Events, llama-swap's frames): on connect the log history as
// two logData events (source proxy: swapd's own lines; upstream: the backends' lines, each
// "[model] line"), then the kept states of `events`, then every event as it comes, the new log
// lines as `log_events` sends them (which must outlive `door`'s serving).
void AddEventRoutes(FrontDoor& door, std::shared_ptr<EventHub> events, std::shared_ptr<LogHub> logs,
                    LogEvents& log_events);

// Adds GET /models/sse (daemon/model_sse_routes.cpp): llama.cpp's router-mode model events, from
// the same hub as /api/events.
void AddModelSseRoute(FrontDoor& door, std::shared_ptr<EventHub> events);

// Adds GET /api/memory/history (?model=, limit 1-500, 100): the footprints recorded of a model in
// the history store, newest first; 503 without a store.
void AddMemoryRoutes(FrontDoor& door, const FootprintMonitor& memory);

// Adds GET /api/metrics/activity (the request history: ?model= (repeatable), start, end
// (RFC 3339), min_id, max_id, limit (1-999, 25), page, sort, order, as llama-swap) and
// GET /api/metrics/stats (?model=: totals and speed histograms), read from `activity`; a row's
// has_capture says whether `captures` still holds its capture.
void AddActivityRoutes(FrontDoor& door, ActivityLog& activity, const CaptureStore& captures);

// Adds GET /api/captures/{id}: the capture of activity row `id` as llama-swap answers it ({id,
// req_path, req_headers, req_body, resp_headers, resp_body}, bodies in base64); 404 once dropped.
void AddCaptureRoutes(FrontDoor& door, const CaptureStore& captures);

// Adds GET /api/bench (?limit= 1-1000, 100): `swapd bench`'s scoreboard, the newest row of each
// (model, mode, partner) in `store`, newest first, read afresh on every request:
// {rows:[{id, machine, ...BenchRow's JSON}]}. Without a store (null: store.path none, or it could
// not be opened) the list is empty; a failed query adds `error` to the empty list.
void AddBenchRoutes(FrontDoor& door, BenchStore* store);

}  // namespace swapd
