// GET /api/memory/history: what the history store recorded of one model's footprint, newest
// first: each sample's resident memory, GPU memory and the footprint the budget counted after it.
#include "api/memory_routes.h"

#include <nlohmann/json.hpp>

#include "api/memory_json.h"
#include "api/query_params.h"
#include "base/json_text.h"
#include "base/time_text.h"
#include "frontdoor/error_response.h"
#include "memory/footprint_monitor.h"

namespace swapd {
namespace {

using nlohmann::json;

constexpr int kDefaultSamples = 100;

json RecordJson(const FootprintRecord& r) {
  json vram = json::object();
  for (const auto& [gpu, bytes] : r.vram) vram[std::to_string(gpu)] = bytes;
  return {{"at", Rfc3339(r.at)},          {"definition", r.definition},
          {"rss_bytes", r.process.rss},   {"anon_bytes", r.process.anon},
          {"file_bytes", r.process.file}, {"shmem_bytes", r.process.shmem},
          {"vram_bytes", vram},           {"learned", FootprintJson(r.learned)}};
}

}  // namespace

void AddMemoryRoutes(FrontDoor& door, const FootprintMonitor& memory) {
  door.AddRoute(
      "GET", "/api/memory/history",
      [&memory](const HttpRequest& req, HttpResponse& res, RequestContext& ctx) {
        const std::string model(req.Param("model").value_or(""));
        if (model.empty()) {
          return SetErrorResponse(
              res, Status::Error(ErrorCode::kInvalidArgument, "missing ?model= (a model id)"));
        }
        const auto limit = QueryInteger(req, "limit", 1, HistoryStore::kRowsPerModel,
                                        "limit must be a whole number from 1 to " +
                                            std::to_string(HistoryStore::kRowsPerModel));
        if (!limit.ok()) return SetErrorResponse(res, limit.status());
        ctx.WillBlock();  // a query of the database
        Result<std::vector<FootprintRecord>> records =
            memory.History(model, static_cast<int>(limit.value().value_or(kDefaultSamples)));
        if (!records.ok()) return SetErrorResponse(res, records.status());
        json rows = json::array();
        for (const FootprintRecord& r : records.value()) rows.push_back(RecordJson(r));
        res.SetBody(JsonText(json{{"model", model}, {"records", rows}}), "application/json");
      });
}

}  // namespace swapd
