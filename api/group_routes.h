// The Groups page's API: GET /api/groups (the groups, their flags and members' states) and
// GET /api/plan?model= (what a request for that model would stop now and why, or why it would be
// refused; nothing changes). The handlers run on the front door's threads; `router` must outlive
// `door`'s serving.
#pragma once

#include "backends/router.h"
#include "frontdoor/front_door.h"

namespace swapd {

void AddGroupRoutes(FrontDoor& door, Router& router);

}  // namespace swapd
