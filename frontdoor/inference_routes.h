// The inference routes: the one table of the routes whose requests name a model and go to that
// model's backend (llama-swap's "model-dispatched" routes), and of where swapd finds the model id
// in each. The front door dispatches the routes it can read a model from; the in-flight table
// tracks every route of the table, also when it is reached through /upstream/<model>/. Pure;
// thread safe.
#pragma once

#include <string_view>

namespace swapd {

struct InferenceRoute {
  enum class ModelIn {
    kJsonBody,  // the JSON body's "model" (or ?model=); a body that is not JSON: as llama-swap,
                // a multipart field, an urlencoded field or ?model=
    kForm,      // a multipart/form-data field "model" (or ?model=)
    kQuery,     // ?model= (the GET routes)
  };
  std::string_view method;
  std::string_view path;
  ModelIn model_in;
};

// The route of `method` `path` (a path without its query), or null when it is not an inference
// route.
const InferenceRoute* FindInferenceRoute(std::string_view method, std::string_view path);

// The path and query a backend gets for a client's `target` on an inference route: the same,
// except that llama-swap's versionless routes lose their "/v" ("/v/chat/completions" goes as
// "/chat/completions") and "/audioapi/..." its "/audioapi".
std::string_view ForwardedTarget(std::string_view target);

// Whether a request `method` `path` is model-dispatched (inference) as llama-swap counts it.
inline bool IsInferenceRoute(std::string_view method, std::string_view path) {
  return FindInferenceRoute(method, path) != nullptr;
}

}  // namespace swapd
