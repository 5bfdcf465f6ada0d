// GET /api/metrics/activity and GET /api/metrics/stats, as llama-swap answers them: the request
// history from the ActivityStore, filtered, sorted and paged (has_capture from the CaptureStore);
// totals and speed histograms.
#include "api/activity_routes.h"

#include <cctype>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "api/query_params.h"
#include "base/json_text.h"
#include "base/text.h"
#include "base/time_text.h"
#include "frontdoor/error_response.h"
#include "store/activity_log.h"
#include "store/capture_store.h"

namespace swapd {
namespace {

using nlohmann::json;

json EntryJson(const ActivityEntry& e, bool has_capture) {
  json row = {{"id", e.id},
              {"timestamp", Rfc3339(e.timestamp)},
              {"model", e.model},
              {"req_path", e.req_path},
              {"resp_content_type", e.content_type},
              {"resp_status_code", e.status},
              {"tokens",
               {{"cache_tokens", e.tokens.cache},
                {"draft_tokens", e.tokens.draft},
                {"draft_acc_tokens", e.tokens.draft_accepted},
                {"input_tokens", e.tokens.input},
                {"output_tokens", e.tokens.output},
                {"prompt_per_second", e.tokens.prompt_per_second},
                {"tokens_per_second", e.tokens.tokens_per_second}}},
              {"duration_ms", e.duration_ms},
              {"has_capture", has_capture}};
  if (!e.error.empty()) row["error_msg"] = e.error;
  if (!e.metadata.empty()) row["metadata"] = e.metadata;
  return row;
}

json HistogramJson(const std::optional<SpeedHistogram>& h) {
  if (!h) return nullptr;
  return {{"bins", h->bins}, {"min", h->min}, {"max", h->max}, {"binSize", h->bin_size},
          {"p50", h->p50},   {"p95", h->p95}, {"p99", h->p99}};
}

Status BadQuery(const std::string& message) {
  return Status::Error(ErrorCode::kInvalidArgument, message);
}

Result<std::optional<int64_t>> Time(const HttpRequest& req, const char* name) {
  auto raw = req.Param(name);
  if (!raw || TrimSpace(*raw).empty()) return std::optional<int64_t>();
  std::optional<int64_t> at = ParseRfc3339(TrimSpace(*raw));
  if (!at) {
    return BadQuery(std::string("invalid '") + name + "' timestamp, use RFC3339 format");
  }
  return at;
}

// The query of GET /api/metrics/activity; a 400's message when it does not make sense.
Result<ActivityQuery> QueryOf(const HttpRequest& req) {
  ActivityQuery q;
  for (const auto& [key, value] : req.params) {  // ?model=a&model=b: either
    if (key == "model" && !TrimSpace(value).empty()) q.filter.models.emplace_back(TrimSpace(value));
  }
  auto start = Time(req, "start");
  if (!start.ok()) return start.status();
  auto end = Time(req, "end");
  if (!end.ok()) return end.status();
  q.filter.start = start.value();
  q.filter.end = end.value();
  if (q.filter.start && q.filter.end && *q.filter.start > *q.filter.end) {
    return BadQuery("start must be before end");
  }
  auto min_id = QueryInteger(req, "min_id", 1, INT64_MAX, "min_id must be >= 1");
  if (!min_id.ok()) return min_id.status();
  auto max_id = QueryInteger(req, "max_id", 1, INT64_MAX, "max_id must be >= 1");
  if (!max_id.ok()) return max_id.status();
  q.filter.min_id = min_id.value().value_or(0);
  q.filter.max_id = max_id.value().value_or(0);
  if (q.filter.min_id > 0 && q.filter.max_id > 0 && q.filter.min_id > q.filter.max_id) {
    return BadQuery("min_id must be <= max_id");
  }
  auto limit = QueryInteger(req, "limit", 1, 999, "limit must be between 1 and 999");
  if (!limit.ok()) return limit.status();
  if (limit.value()) q.limit = static_cast<int>(*limit.value());
  auto page = QueryInteger(req, "page", 1, INT32_MAX, "page must be >= 1");
  if (!page.ok()) return page.status();
  if (page.value()) q.page = static_cast<int>(*page.value());
  if (auto sort = req.Param("sort"); sort && !TrimSpace(*sort).empty()) {
    if (!IsActivitySortKey(std::string(TrimSpace(*sort)))) return BadQuery("invalid sort column");
    q.sort = std::string(TrimSpace(*sort));
  }
  if (auto order = req.Param("order"); order && !TrimSpace(*order).empty()) {
    std::string o(TrimSpace(*order));
    for (char& c : o) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (o != "asc" && o != "desc") return BadQuery("order must be asc or desc");
    q.ascending = o == "asc";
  }
  return q;
}

}  // namespace

void AddActivityRoutes(FrontDoor& door, ActivityLog& activity, const CaptureStore& captures) {
  door.AddRoute(
      "GET", "/api/metrics/activity",
      [&activity, &captures](const HttpRequest& req, HttpResponse& res, RequestContext& ctx) {
        Result<ActivityQuery> query = QueryOf(req);
        if (!query.ok()) return SetErrorResponse(res, query.status());
        ctx.WillBlock();  // a query of the database
        Result<ActivityPage> page = activity.store().List(query.value());
        if (!page.ok()) return SetErrorResponse(res, page.status());
        json data = json::array();
        for (const ActivityEntry& e : page.value().data) {
          data.push_back(EntryJson(e, captures.Has(e.id)));
        }
        res.SetBody(JsonText(json{{"data", data},
                                  {"page", page.value().page},
                                  {"limit", page.value().limit},
                                  {"total", page.value().total},
                                  {"total_pages", page.value().total_pages}}),
                    "application/json");
      });
  door.AddRoute("GET", "/api/metrics/stats",
                [&activity](const HttpRequest& req, HttpResponse& res, RequestContext& ctx) {
                  ctx.WillBlock();
                  Result<ActivityStats> stats = activity.store().Stats(
                      std::string(TrimSpace(req.Param("model").value_or(""))));
                  if (!stats.ok()) return SetErrorResponse(res, stats.status());
                  const ActivityStats& s = stats.value();
                  res.SetBody(json{{"total_requests", s.total_requests},
                                   {"total_input_tokens", s.total_input_tokens},
                                   {"total_output_tokens", s.total_output_tokens},
                                   {"total_cache_tokens", s.total_cache_tokens},
                                   {"prompt_histogram", HistogramJson(s.prompt)},
                                   {"gen_histogram", HistogramJson(s.generation)}}
                                  .dump(),
                              "application/json");
                });
}

}  // namespace swapd
