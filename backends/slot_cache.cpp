#include "backends/slot_cache.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "config/slot_cache_settings.h"
#include "http/http_client.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// The identity of the files a command line names (model, projector, draft model...): a changed
// file under the same name must not restore an old cache.
std::vector<std::string> FileIdentities(const std::vector<std::string>& argv) {
  std::vector<std::string> ids;
  for (size_t i = 1; i < argv.size(); ++i) {
    struct stat st {};
    if (argv[i].empty() || argv[i][0] == '-' || ::stat(argv[i].c_str(), &st) != 0 ||
        !S_ISREG(st.st_mode)) {
      continue;
    }
    ids.push_back(argv[i] + ":" + std::to_string(st.st_size) + ":" +
                  std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec));
  }
  return ids;
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// One HTTP exchange with the backend, bounded by `deadline`.
struct Exchange {
  int status = 0;  // 0: no answer
  json body;
  std::string error;
};

Exchange Call(const ProxyUrl& url, const std::string& method, const std::string& target,
              const json* body, Clock::time_point deadline) {
  Exchange out;
  const auto left = deadline - Clock::now();
  if (left <= Clock::duration::zero()) {
    out.error = "slotCacheTimeout reached";
    return out;
  }
  // The time left bounds the connect, the sending and each silence; in whole seconds (the
  // timeouts' unit), rounded up.
  const auto seconds = std::chrono::ceil<std::chrono::seconds>(left);
  UpstreamConnection::Timeouts timeouts;
  timeouts.connect = timeouts.tls_handshake = timeouts.read = timeouts.write = seconds;
  ClientRequest request;
  request.method = method;
  request.target = target;
  if (body != nullptr) {
    request.headers.Add("Content-Type", "application/json");
    request.body = body->dump(-1, ' ', false, json::error_handler_t::replace);
  }
  ClientResponse response;
  UpstreamFailure failure;
  if (!HttpClient(url, timeouts).Fetch(request, response, failure)) {
    out.error = failure.text;
    return out;
  }
  out.status = response.status;
  out.body = json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (response.status != 200) {
    out.error = "HTTP " + std::to_string(response.status);
    if (out.body.is_object() && out.body.contains("error") && out.body["error"].is_object() &&
        out.body["error"].value("message", json()).is_string()) {
      out.error += ": " + out.body["error"]["message"].get<std::string>();
    }
  }
  return out;
}

int64_t IntField(const json& object, const char* key, int64_t fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

// The slots worth saving: every slot, except those that say they hold no prompt.
std::vector<int> UsedSlots(const json& slots) {
  std::vector<int> ids;
  if (!slots.is_array()) return ids;
  for (const json& slot : slots) {
    const int64_t id = IntField(slot, "id", -1);
    if (id < 0 || id > 100000) continue;
    if (IntField(slot, "n_prompt_tokens", 1) == 0) continue;
    ids.push_back(static_cast<int>(id));
  }
  return ids;
}

}  // namespace

SlotCache::SlotCache(const ModelConfig& model, std::shared_ptr<SlotStore> store)
    : model_id_(model.id),
      dir_(model.slot_dir),
      definition_key_(model.slot_key),
      url_(ParseProxyUrl(model.proxy)),
      argv_(model.argv),
      store_(std::move(store)) {}

void SlotCache::Prepare() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> parts = {definition_key_};
  for (auto& id : FileIdentities(argv_)) parts.push_back(std::move(id));
  key_ = StableHash(parts);
  auto files = store_->Prepare(dir_, key_);
  if (!files.ok()) {
    spdlog::warn("model {}: slot cache: {}", model_id_, files.status().message());
    restorable_.clear();
    return;
  }
  restorable_ = std::move(files).value();
}

void SlotCache::Restore() {
  std::lock_guard<std::mutex> lock(mu_);
  if (restorable_.empty()) return;
  const auto begin = Clock::now();
  const auto deadline = begin + store_->settings().timeout;
  for (const SlotFile& file : restorable_) {
    const auto started = Clock::now();
    const json body = {{"filename", file.name}};
    Exchange ex = Call(url_, "POST", "/slots/" + std::to_string(file.slot) + "?action=restore",
                       &body, deadline);
    SlotEvent event{SlotEvent::Kind::kRestored,     model_id_, file.slot, 0, 0,
                    Seconds(Clock::now() - started)};
    if (!ex.error.empty()) {
      spdlog::warn("model {}: slot {} not restored from {} ({}): the prompt is processed again",
                   model_id_, file.slot, file.name, ex.error);
      event.kind = SlotEvent::Kind::kRestoreFailed;
      store_->Notify(event);
      // A file the backend refused will not restore next time either.
      if (ex.status != 0) store_->Remove(dir_, file.name);
      if (ex.status == 0) break;  // out of time, or the backend is gone
      continue;
    }
    event.tokens = IntField(ex.body, "n_restored", 0);
    event.bytes = static_cast<uint64_t>(IntField(ex.body, "n_read", 0));
    store_->Touch(dir_, file.name);
    store_->Notify(event);
    spdlog::info("model {}: slot {} restored: {} tokens, {} bytes in {:.0f} ms", model_id_,
                 file.slot, event.tokens, event.bytes, event.seconds * 1000);
  }
  restorable_.clear();
  spdlog::debug("model {}: slot restore took {:.0f} ms", model_id_,
                Seconds(Clock::now() - begin) * 1000);
}

void SlotCache::Save() {
  std::lock_guard<std::mutex> lock(mu_);
  if (key_.empty()) return;  // never prepared: the process was not started by us
  const auto deadline = Clock::now() + store_->settings().timeout;
  Exchange list = Call(url_, "GET", "/slots", nullptr, deadline);
  if (!list.error.empty()) {
    spdlog::warn("model {}: slot cache not saved: GET /slots: {}", model_id_, list.error);
    store_->Notify(SlotEvent{SlotEvent::Kind::kSaveFailed, model_id_, -1, 0, 0, 0});
    return;
  }
  for (int slot : UsedSlots(list.body)) {
    const auto started = Clock::now();
    const std::string partial = SlotStore::PartialName(key_, slot);
    const json body = {{"filename", partial}};
    Exchange ex =
        Call(url_, "POST", "/slots/" + std::to_string(slot) + "?action=save", &body, deadline);
    SlotEvent event{SlotEvent::Kind::kSaved,        model_id_, slot, 0, 0,
                    Seconds(Clock::now() - started)};
    if (!ex.error.empty()) {
      spdlog::warn("model {}: slot {} not saved ({}); stopping without it", model_id_, slot,
                   ex.error);
      store_->Remove(dir_, partial);
      event.kind = SlotEvent::Kind::kSaveFailed;
      store_->Notify(event);
      if (ex.status == 0) break;  // out of time, or the backend is gone
      continue;
    }
    event.tokens = IntField(ex.body, "n_saved", 0);
    if (event.tokens <= 0) {  // an empty slot: nothing worth restoring
      store_->Remove(dir_, partial);
      continue;
    }
    auto bytes = store_->Commit(dir_, key_, slot);
    if (!bytes.ok()) {
      spdlog::warn("model {}: slot {}: {}", model_id_, slot, bytes.status().message());
      store_->Remove(dir_, partial);
      event.kind = SlotEvent::Kind::kSaveFailed;
      store_->Notify(event);
      continue;
    }
    event.bytes = bytes.value();
    store_->Notify(event);
    spdlog::info("model {}: slot {} saved: {} tokens, {} bytes in {:.0f} ms", model_id_, slot,
                 event.tokens, event.bytes, event.seconds * 1000);
  }
}

void SlotCache::SetProxy(const std::string& proxy) {
  std::lock_guard lock(mu_);
  url_ = ParseProxyUrl(proxy);
}

}  // namespace swapd
