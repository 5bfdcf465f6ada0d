#include "api/metrics_routes.h"

#include <chrono>

#include "observe/model_server_gauges.h"

namespace swapd {

void AddMetricsRoute(FrontDoor& door, const Router& router, Metrics& metrics,
                     const FootprintMonitor& memory, std::function<std::string()> more) {
  door.AddRoute("GET", "/metrics",
                [&router, &metrics, &memory, more = std::move(more)](
                    const HttpRequest&, HttpResponse& res, RequestContext&) {
                  const std::vector<ModelSnapshot> snapshot = router.Snapshot();
                  const ModelServerGauges gauges =
                      DeriveModelServerGauges(snapshot, router.Budget(), router.MaxResident());
                  res.SetBody(RenderModelServerGauges(gauges, std::chrono::system_clock::now()) +
                                  metrics.RenderPrometheus(snapshot) +
                                  memory.RenderPrometheus(snapshot) + (more ? more() : ""),
                              "text/plain; version=0.0.4");
                });
}

}  // namespace swapd
