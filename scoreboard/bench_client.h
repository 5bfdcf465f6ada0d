// BenchClient: the part of swapd's HTTP API that `swapd bench` drives, through http/'s HttpClient:
// the model list, /api/models (state, pid, start failures, definition hash), load and unload, and
// a streamed chat completion measured as it arrives. Every failure is a Status. Thread safe: each
// call opens its own connection, so two threads may stream at once (a duo).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "scoreboard/chat_stream.h"

namespace swapd {

// One model as GET /api/models shows it.
struct ModelState {
  std::string id;
  std::string state;  // "stopped", "starting", "ready", "stopping", "failed"
  int pid = 0;
  std::string last_error;
  std::vector<std::string> last_log_lines;
  int start_failures = 0;
  int crashes = 0;
  std::string definition;  // the definition hash (ModelConfig::slot_key); "" from older swapds
  std::vector<std::string> files;  // its model files (memory.files.paths); empty when unknown
  bool prefetch = false;           // memory.prefetch: swapd reads its files before a start
  bool slot_cache = false;         // slot_cache: its cmd uses ${SLOT_DIR}
  double last_load_seconds = -1;   // its last successful start, start to ready; < 0 unknown
};

// The model `id` of `models`; null when it is not there.
const ModelState* FindModelState(const std::vector<ModelState>& models, const std::string& id);

class BenchClient {
 public:
  // `base_url`: "http://host:port". `api_key`: sent as a Bearer token when not empty.
  BenchClient(std::string base_url, std::string api_key);

  const std::string& base_url() const { return base_url_; }

  // GET /health answered 200.
  bool Healthy() const;
  // The ids GET /v1/models lists, in its order (selectors, peers' models and aliases too).
  Result<std::vector<std::string>> ListModels() const;
  // GET /v1/models's entry for `model`; a null json when it is not listed.
  Result<nlohmann::json> ListEntry(const std::string& model) const;
  // GET /api/models.
  Result<std::vector<ModelState>> Models() const;
  // GET /api/version's "pid" (the swapd process); 0 when it does not say.
  Result<int> DaemonPid() const;
  // POST /api/models/unload (every model); returns once they are stopped.
  Status UnloadAll() const;
  // POST /models/load {"model": model}: starts it without waiting.
  Status Load(const std::string& model) const;
  // POSTs `body` to /v1/chat/completions (it must ask for a stream) and reads the answer as it
  // arrives. A transport failure or an HTTP error status is an error Status; an error event in
  // the stream is stats.error.
  Result<ChatStreamStats> StreamChat(const nlohmann::json& body) const;

 private:
  Result<nlohmann::json> GetJson(const std::string& path) const;
  Status Post(const std::string& path, const std::string& body) const;

  const std::string base_url_;
  const std::string api_key_;
};

}  // namespace swapd
