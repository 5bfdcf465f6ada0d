// What Ollama's clients are told of the models: /api/tags (the models of the config, its
// selectors and the peers' models), /api/ps (the running ones) and /api/show (one model). What a
// config does not say (a model's files, its family) is guessed from its command line's model file
// name where that is easy ("Qwen3-4B-Q4_K_M.gguf": gguf, 4B, Q4_K_M), else left empty; a size
// is that file's (one stat), else 0. Thread safe.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backends/router.h"
#include "config/config.h"

namespace swapd {

// {"models": [{name, model, modified_at, size, digest, details}]}, sorted by name.
nlohmann::json OllamaTags(const Config& config);

// {"models": [{name, model, size, size_vram, digest, details, expires_at}]}: the models whose
// backend is ready or starting; size is what the memory budget counts for it, else its file's.
// expires_at: when an idle model idles out (its idle_deadline, read against `steady_now`), else
// `now` (Unix time) plus the ttl in force (its clock starts when the model goes idle); a model
// without a ttl never expires.
nlohmann::json OllamaPs(const std::vector<ModelSnapshot>& running, const Config& config,
                        int64_t now, std::chrono::steady_clock::time_point steady_now);

// /api/show of `model` (null for a peer's model or a selector, which swapd knows little of):
// modelfile, parameters, template, details, model_info, capabilities, modified_at.
nlohmann::json OllamaShow(const ModelConfig* model);

// details: {parent_model, format, family, families, parameter_size, quantization_level}.
nlohmann::json OllamaDetails(const ModelConfig* model);

// A stable 64-hex-digit digest of a model's name (Ollama lists a sha256 of the model's files).
std::string OllamaDigest(const std::string& name);

}  // namespace swapd
