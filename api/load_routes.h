// Loading and unloading models by hand.
//  - llama-swap's: GET /unload and POST /api/models/unload stop every model, POST
//    /api/models/unload/{model} one (id or alias); each blocks until they are stopped, then "OK".
//  - llama.cpp's router API (llama-swap has no load route), so that its clients (the pi coding
//    agent's llama.cpp provider) manage swapd's models: POST /models/load and POST /models/unload
//    with {"model": "<id or alias>"}; 200 {"success": true} at once, and GET /models shows the
//    progress: loading, then loaded, or unloaded with failed and exit_code.
// The handlers run on the front door's threads; `router` must outlive `door`'s serving.
#pragma once

#include "backends/router.h"
#include "frontdoor/front_door.h"

namespace swapd {

void AddLoadRoutes(FrontDoor& door, Router& router);

}  // namespace swapd
