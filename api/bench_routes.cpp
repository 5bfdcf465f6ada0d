// GET /api/bench: the scoreboard of `swapd bench`, the newest row of each (model, mode, partner)
// from the bench store. `swapd bench` writes the store from its own process, so every request
// reads it afresh (no cache).
#include "api/bench_routes.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "api/query_params.h"
#include "base/json_text.h"
#include "frontdoor/error_response.h"
#include "scoreboard/bench_store.h"

namespace swapd {
namespace {

using nlohmann::json;

constexpr int kDefaultRows = 100;
constexpr int kMaxLimit = 1000;

}  // namespace

void AddBenchRoutes(FrontDoor& door, BenchStore* store) {
  door.AddRoute(
      "GET", "/api/bench", [store](const HttpRequest& req, HttpResponse& res, RequestContext& ctx) {
        const auto limit =
            QueryInteger(req, "limit", 1, kMaxLimit,
                         "limit must be a whole number from 1 to " + std::to_string(kMaxLimit));
        if (!limit.ok()) return SetErrorResponse(res, limit.status());
        json body = {{"rows", json::array()}};
        if (store != nullptr) {
          ctx.WillBlock();  // a query of the database
          Result<std::vector<BenchStore::Stored>> latest =
              store->Latest(static_cast<int>(limit.value().value_or(kDefaultRows)));
          if (latest.ok()) {
            for (const BenchStore::Stored& s : latest.value()) {
              json row = ToJson(s.row);
              row["id"] = s.id;
              row["machine"] = s.machine;
              body["rows"].push_back(std::move(row));
            }
          } else {
            // The scoreboard is not worth an error page: the list is empty and says why.
            spdlog::warn("GET /api/bench: {}", latest.status().message());
            body["error"] = latest.status().message();
          }
        }
        res.SetBody(JsonText(body), "application/json");
      });
}

}  // namespace swapd
