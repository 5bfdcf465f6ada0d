// Ollama's API on swapd's port, for the clients that speak it (editor plugins, the `ollama`
// libraries): /api/tags, /api/ps, /api/show, /api/chat, /api/generate, /api/embed and
// /api/embeddings. A request is translated to the model's OpenAI route (ollama_translate.h),
// resolved and dispatched as the OpenAI routes are (FrontDoor::Resolve, FrontDoor::DispatchJson:
// aliases, profiles, selectors, groups, budgets, peers, the records), and its answer translated
// back (ollama_answer.h), a stream line by line as it arrives. The routes that manage model files
// (pull, push, create, copy, delete, blobs) answer 501: the models are the config's. Errors are
// Ollama's {"error": "..."}. HEAD / is answered by the FrontDoor; GET /api/version by
// api/status_routes.cpp (its "version" is what Ollama's clients read).
// Thread safe: handlers run on the server's threads.
#pragma once

#include "backends/router.h"
#include "frontdoor/front_door.h"

namespace swapd {

// Adds the routes to `door`. `door` and `router` must outlive it.
void AddOllamaRoutes(FrontDoor& door, Router& router);

}  // namespace swapd
