// llama-swap's model listing routes: GET /v1/models and /models (every model, alias when
// includeAliasesInList, selector, the active profile's pins and the peers' models, sorted by id,
// unlisted ones hidden, each with its status as llama.cpp's router reports it) and GET /running
// (the models whose backend runs: state, pid, requests in flight and queued, proxy, ttl).
// The handlers run on the front door's threads; `router` must outlive `door`'s serving.
#pragma once

#include "backends/router.h"
#include "frontdoor/front_door.h"

namespace swapd {

void AddModelRoutes(FrontDoor& door, const Router& router);

}  // namespace swapd
