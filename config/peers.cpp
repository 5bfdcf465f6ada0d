#include "config/peers.h"

#include "base/proxy_url.h"
#include "config/field_reader.h"
#include "config/macros.h"
#include "config/model_builder.h"
#include "config/timeouts.h"
#include "config/yaml_scalar.h"

namespace swapd {
namespace {

class PeerLinker {
 public:
  PeerLinker(const RawConfig& raw, Config& config, DiagnosticSink& sink)
      : raw_(raw), config_(config), sink_(sink) {}

  void Link() {
    for (const auto& e : raw_.peers->entries) {
      PeerConfig peer;
      peer.id = e.key->value;
      peer.pos = e.key->pos;
      ctx_ = "peers." + peer.id + ".";
      if (peer.id.empty()) {
        sink_.Error(e.key->pos, "peers: a peer id cannot be empty");
      } else if (!e.value->is_map()) {
        sink_.Error(e.value->pos, "peers." + peer.id + ": expected a map with proxy and models");
      } else if (Read(*e.value, peer)) {
        config_.peers[peer.id] = std::move(peer);
      }
    }
    Names();
  }

 private:
  // A scalar field with the global macros expanded, or nullopt (absent, or reported).
  std::optional<std::string> Text(const YamlNode& node, const char* key) {
    const YamlEntry* e = node.Find(key);
    if (e == nullptr || e->value->is_null()) return std::nullopt;
    if (!e->value->is_scalar()) {
      sink_.Error(e->value->pos, ctx_ + key + ": expected a string, got " + Describe(*e->value));
      return std::nullopt;
    }
    std::string text = ExpandMacros(e->value->value, raw_.macros);
    if (auto refs = FindMacroRefs(text); !refs.empty()) {
      sink_.Error(e->value->pos, ctx_ + key + ": unknown macro ${" + refs.front() + "}");
      return std::nullopt;
    }
    return text;
  }

  bool Read(const YamlNode& node, PeerConfig& peer) {
    bool ok = true;
    const std::optional<std::string> proxy = Text(node, "proxy");
    const YamlEntry* proxy_entry = node.Find("proxy");
    const ProxyUrl url = ParseProxyUrl(proxy.value_or(""));
    const bool http =
        proxy && (proxy->rfind("http://", 0) == 0 || proxy->rfind("https://", 0) == 0);
    if (!http || url.host.empty()) {
      sink_.Error(proxy_entry ? proxy_entry->value->pos : node.pos,
                  ctx_ +
                      "proxy: expected the peer's base URL, http://HOST[:PORT][/PATH] or "
                      "https://...");
      ok = false;
    } else {
      peer.proxy = *proxy;
      while (!peer.proxy.empty() && peer.proxy.back() == '/') peer.proxy.pop_back();
      peer.url = ParseProxyUrl(peer.proxy);
    }
    peer.api_key = Text(node, "apiKey").value_or("");
    const YamlEntry* models = node.Find("models");
    if (models == nullptr || !models->value->is_sequence() || models->value->items.empty()) {
      sink_.Error(models ? models->value->pos : node.pos,
                  ctx_ + "models: expected a list of the peer's model names");
      ok = false;
    } else {
      for (const auto& m : models->value->items) {
        if (!m->is_scalar() || m->value.empty()) {
          sink_.Error(m->pos, ctx_ + "models: expected a model name, got " + Describe(*m));
          ok = false;
        } else {
          peer.models.push_back(m->value);
        }
      }
    }
    if (const YamlEntry* f = node.Find("filters"); f && f->value->is_map()) {
      for (const char* key : {"stripParams", "strip_params"}) {
        const YamlEntry* strip = f->value->Find(key);
        if (strip && strip->value->is_scalar()) {
          peer.strip_params = SplitStripParams(strip->value->value);
          break;
        }
      }
      if (const YamlEntry* set = f->value->Find("setParams"); set && set->value->is_map()) {
        peer.set_params = NodeToJson(*set->value);
        if (peer.set_params.erase("model") != 0) {
          sink_.Warning(set->value->Find("model")->key->pos,
                        ctx_ + "filters.setParams: model is never overridden, ignored");
        }
      }
    }
    if (const YamlEntry* t = node.Find("timeouts"); t) {
      peer.timeouts = ReadTimeouts(*t->value, ctx_, sink_);
    }
    return ok;
  }

  // "<peer>/<model>" for each, and the bare names only one peer claims.
  void Names() {
    std::map<std::string, int> listed_by;
    for (const auto& [id, peer] : config_.peers) {
      for (const std::string& model : peer.models) {
        const std::string fqn = PeerModelId(id, model);
        if (config_.FindModel(fqn) != nullptr) {
          sink_.Error(peer.pos, "peers." + id + ": \"" + fqn +
                                    "\" is also a local model id or alias; rename one of them");
          continue;
        }
        if (auto [it, added] = config_.peer_models.try_emplace(fqn, PeerModelRef{id, model});
            !added) {
          sink_.Error(peer.pos, "peers." + id + ": \"" + fqn + "\" also names model \"" +
                                    it->second.model + "\" of peer \"" + it->second.peer +
                                    "\"; the name is ambiguous");
          continue;
        }
        ++listed_by[model];
      }
    }
    for (const auto& [model, count] : listed_by) {
      const bool selector = raw_.selectors && raw_.selectors->Find(model) != nullptr;
      if (count != 1 || selector || config_.FindModel(model) != nullptr ||
          config_.peer_models.count(model) != 0) {
        continue;
      }
      for (const auto& [id, peer] : config_.peers) {
        for (const std::string& m : peer.models) {
          if (m == model) config_.peer_models[model] = PeerModelRef{id, model};
        }
      }
    }
  }

  const RawConfig& raw_;
  Config& config_;
  DiagnosticSink& sink_;
  std::string ctx_;
};

}  // namespace

void LinkPeers(const RawConfig& raw, Config& config, DiagnosticSink& sink) {
  if (raw.peers) PeerLinker(raw, config, sink).Link();
}

}  // namespace swapd
