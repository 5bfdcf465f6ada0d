// GET /api/captures/{id}: the capture of activity row `id` as llama-swap answers it ({id,
// req_path, req_headers, req_body, resp_headers, resp_body}, bodies in base64); 404 once dropped.
// The handler runs on the front door's threads; `captures` must outlive `door`'s serving.
#pragma once

#include "frontdoor/front_door.h"
#include "store/capture_store.h"

namespace swapd {

void AddCaptureRoutes(FrontDoor& door, const CaptureStore& captures);

}  // namespace swapd
