// The web dashboard's routes: GET /ui/ and its files (ui/, compiled in), GET /ui -> /ui/, and
// GET /favicon.ico. The pages read swapd's own API (/api/events, /api/models, ...) from the
// browser.
#pragma once

#include "backends/router.h"
#include "frontdoor/front_door.h"

namespace swapd {

void AddUiRoutes(FrontDoor& door);

// The Groups page's API: GET /api/groups (the groups, their flags and members' states) and
// GET /api/plan?model= (what a request for that model would stop now and why, or why it would be
// refused; nothing changes).
void AddGroupRoutes(FrontDoor& door, Router& router);

}  // namespace swapd
