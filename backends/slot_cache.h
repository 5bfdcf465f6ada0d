// SlotCache: one model's llama-server prompt cache kept across a stop and a start. Before a
// planned stop it asks the backend which slots hold a prompt (GET /slots) and saves each of them
// (POST /slots/{id}?action=save) into the model's directory; once the backend is ready again, and
// before its first request, it restores the files saved by the same model definition
// (POST /slots/{id}?action=restore). The whole save (or restore) is bounded by slotCacheTimeout;
// a failure is logged and costs only the cache. Only models whose cmd uses ${SLOT_DIR} have one.
// The key of a saved file is the model's slot_key plus the size and modification time of every
// file its argv names, so a re-downloaded model file does not restore an old cache either.
// Thread safe: the methods run one at a time (a start's restore and a stop's save may overlap
// when a stop cancels a start).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/slot_store.h"
#include "base/proxy_url.h"
#include "config/config.h"

namespace swapd {

class SlotCache {
 public:
  SlotCache(const ModelConfig& model, std::shared_ptr<SlotStore> store);

  // Before the process is spawned: the directory exists, files that cannot be restored are gone.
  void Prepare();
  // Once the backend answers its checkEndpoint, before it is reported ready.
  void Restore();
  // Before a planned stop, while the backend still runs.
  void Save();
  // Where the backend listens from its next start on: the model's proxy for the port it was
  // given (backends/port_allocator.h), when that is not the configured one.
  void SetProxy(const std::string& proxy);

 private:
  std::mutex mu_;  // held by each method for its whole run
  std::string model_id_;
  std::string dir_;
  std::string definition_key_;  // ModelConfig::slot_key
  ProxyUrl url_;                // the model's proxy
  std::vector<std::string> argv_;
  std::string key_;  // definition_key_ + the model files' identity, from Prepare()
  std::vector<SlotFile> restorable_;
  std::shared_ptr<SlotStore> store_;
};

}  // namespace swapd
