// GET /api/metrics/activity (the request history: ?model= (repeatable), start, end (RFC 3339),
// min_id, max_id, limit (1-999, 25), page, sort, order, as llama-swap) and GET /api/metrics/stats
// (?model=: totals and speed histograms), read from `activity`; a row's has_capture says whether
// `captures` still holds its capture. The handlers run on the front door's threads; `activity`
// and `captures` must outlive `door`'s serving.
#pragma once

#include "frontdoor/front_door.h"
#include "store/activity_log.h"
#include "store/capture_store.h"

namespace swapd {

void AddActivityRoutes(FrontDoor& door, ActivityLog& activity, const CaptureStore& captures);

}  // namespace swapd
