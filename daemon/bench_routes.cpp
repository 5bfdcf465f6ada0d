// GET /api/bench: the scoreboard of `swapd bench`, the newest row of each (model, mode, partner)
// from the bench store. `swapd bench` writes the store from its own process, so every request
// reads it afresh (no cache).
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "daemon/bench_store.h"
#include "daemon/service_routes.h"
#include "frontdoor/error_response.h"

namespace swapd {
namespace {

using nlohmann::json;

constexpr int kDefaultLimit = 100;
constexpr int kMaxLimit = 1000;

// ?limit=: 1 to kMaxLimit, kDefaultLimit when absent; 0 when malformed.
int LimitOf(const HttpRequest& req) {
  const std::optional<std::string_view> raw = req.Param("limit");
  if (!raw || raw->empty()) return kDefaultLimit;
  if (raw->size() > 4 || raw->find_first_not_of("0123456789") != std::string_view::npos) return 0;
  const int limit = std::stoi(std::string(*raw));
  return limit <= kMaxLimit ? limit : 0;
}

}  // namespace

void AddBenchRoutes(FrontDoor& door, BenchStore* store) {
  door.AddRoute(
      "GET", "/api/bench", [store](const HttpRequest& req, HttpResponse& res, RequestContext& ctx) {
        const int limit = LimitOf(req);
        if (limit <= 0) {
          return SetErrorResponse(res, Status::Error(ErrorCode::kInvalidArgument,
                                                     "limit must be a whole number from 1 to " +
                                                         std::to_string(kMaxLimit)));
        }
        json body = {{"rows", json::array()}};
        if (store != nullptr) {
          ctx.WillBlock();  // a query of the database
          Result<std::vector<BenchStore::Stored>> latest = store->Latest(limit);
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
        res.SetBody(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
      });
}

}  // namespace swapd
