// The profile routes: GET /api/profiles ({active, profiles: [{id, description, pins}]}, a pin
// that disables an id as null) and PUT /api/profiles/active ({"name": "<profile>"} or
// {"name": null}), as llama-swap answers them. No profile is active after a reload.
// The handlers run on the front door's threads. `changed` (may be empty; quick) is called after a
// PUT that activated a profile or none: the events' feed looks at once.
#pragma once

#include <functional>

#include "frontdoor/front_door.h"

namespace swapd {

void AddProfileRoutes(FrontDoor& door, std::function<void()> changed = {});

}  // namespace swapd
