// The web dashboard's routes: GET /ui/ and its files (ui/, compiled in), GET /ui -> /ui/, and
// GET /favicon.ico. The pages read swapd's own API (/api/events, /api/models, ...) from the
// browser.
#pragma once

#include "frontdoor/front_door.h"

namespace swapd {

void AddUiRoutes(FrontDoor& door);

}  // namespace swapd
