#include "frontdoor/inference_routes.h"

#include <iterator>

namespace swapd {
namespace {

using ModelIn = InferenceRoute::ModelIn;

// llama-swap's model-dispatched routes (its internal/server/server.go), in its order, then
// llama.cpp's 2026 routes that name a model in their JSON body.
constexpr InferenceRoute kRoutes[] = {
    {"POST", "/v1/chat/completions", ModelIn::kJsonBody},
    {"POST", "/v1/responses", ModelIn::kJsonBody},
    {"POST", "/v1/completions", ModelIn::kJsonBody},
    {"POST", "/v1/messages", ModelIn::kJsonBody},
    {"POST", "/v1/messages/count_tokens", ModelIn::kJsonBody},
    {"POST", "/v1/embeddings", ModelIn::kJsonBody},
    {"POST", "/reranking", ModelIn::kJsonBody},
    {"POST", "/rerank", ModelIn::kJsonBody},
    {"POST", "/v1/rerank", ModelIn::kJsonBody},
    {"POST", "/v1/reranking", ModelIn::kJsonBody},
    {"POST", "/infill", ModelIn::kJsonBody},
    {"POST", "/completion", ModelIn::kJsonBody},
    {"POST", "/v1/audio/speech", ModelIn::kJsonBody},
    {"POST", "/v1/audio/voices", ModelIn::kJsonBody},
    {"POST", "/v1/images/generations", ModelIn::kJsonBody},
    {"POST", "/sdapi/v1/txt2img", ModelIn::kJsonBody},
    {"POST", "/sdapi/v1/img2img", ModelIn::kJsonBody},
    {"POST", "/audioapi/v1/tasks/run", ModelIn::kJsonBody},
    {"POST", "/v1/audio/transcriptions", ModelIn::kForm},
    {"POST", "/v1/images/edits", ModelIn::kForm},
    {"POST", "/v/chat/completions", ModelIn::kJsonBody},
    {"POST", "/v/responses", ModelIn::kJsonBody},
    {"POST", "/v/completions", ModelIn::kJsonBody},
    {"POST", "/v/messages", ModelIn::kJsonBody},
    {"POST", "/v/messages/count_tokens", ModelIn::kJsonBody},
    {"POST", "/v/embeddings", ModelIn::kJsonBody},
    {"POST", "/v/rerank", ModelIn::kJsonBody},
    {"POST", "/v/reranking", ModelIn::kJsonBody},
    {"GET", "/v1/audio/voices", ModelIn::kQuery},
    {"GET", "/sdapi/v1/loras", ModelIn::kQuery},
    {"GET", "/props", ModelIn::kQuery},
    {"POST", "/v1/chat/completions/input_tokens", ModelIn::kJsonBody},
    {"POST", "/v1/responses/input_tokens", ModelIn::kJsonBody},
    {"POST", "/v1/chat/completions/control", ModelIn::kJsonBody},
};

}  // namespace

std::string_view ForwardedTarget(std::string_view target) {
  if (target.starts_with("/v/")) return target.substr(2);
  if (target.starts_with("/audioapi/")) return target.substr(9);
  return target;
}

const InferenceRoute* FindInferenceRoute(std::string_view method, std::string_view path) {
  for (const InferenceRoute& route : kRoutes) {
    if (route.path == path && route.method == method) return &route;
  }
  return nullptr;
}

}  // namespace swapd
