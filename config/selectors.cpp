#include "config/selectors.h"

#include <set>

#include "config/yaml_scalar.h"

namespace swapd {
namespace {

class SelectorLinker {
 public:
  SelectorLinker(const RawConfig& raw, Config& config, DiagnosticSink& sink)
      : raw_(raw), config_(config), sink_(sink) {}

  void Link() {
    for (const auto& e : raw_.selectors->entries) {
      SelectorConfig s;
      s.id = e.key->value;
      s.pos = e.key->pos;
      ctx_ = "selectors." + s.id;
      if (config_.models.count(s.id) != 0 || config_.aliases.count(s.id) != 0 ||
          config_.peer_models.count(s.id) != 0) {
        sink_.Error(e.key->pos, ctx_ + ": the id is already a model id, alias or peer model");
        continue;
      }
      if (!e.value->is_map()) {
        sink_.Error(e.value->pos, ctx_ + ": expected a map with strategy and targets");
        continue;
      }
      if (Read(*e.value, s) && Coexist(*e.value, s)) config_.selectors[s.id] = std::move(s);
    }
  }

 private:
  bool Read(const YamlNode& node, SelectorConfig& s) {
    const YamlEntry* strategy = node.Find("strategy");
    const std::string name = strategy && strategy->value->is_scalar() ? strategy->value->value : "";
    if (name == "pin") {
      s.strategy = SelectorConfig::Strategy::kPin;
    } else if (name == "warm") {
      s.strategy = SelectorConfig::Strategy::kWarm;
    } else if (name == "spillover" || name == "balance") {  // "balance": newer llama-swap
      s.strategy = SelectorConfig::Strategy::kSpillover;
    } else {
      sink_.Error(strategy ? strategy->value->pos : node.pos,
                  ctx_ + ".strategy: expected pin, warm or spillover" +
                      (name.empty() ? std::string() : ", got \"" + name + "\""));
      return false;
    }
    const YamlEntry* targets = node.Find("targets");
    if (!targets || !targets->value->is_sequence() || targets->value->items.empty()) {
      sink_.Error(targets ? targets->value->pos : node.pos,
                  ctx_ + ".targets: expected a list of at least one model id or alias");
      return false;
    }
    bool ok = true;
    std::set<std::string> seen;
    for (const auto& t : targets->value->items) {
      const std::string id = t->is_scalar() ? t->value : "";
      const ModelConfig* m = config_.FindModel(id);
      if (m == nullptr && raw_.selectors->Find(id) != nullptr) {
        sink_.Error(t->pos,
                    ctx_ + ".targets: \"" + id + "\" is a selector (selectors cannot be chained)");
        ok = false;
      } else if (m == nullptr && config_.FindPeerModel(id) != nullptr) {
        if (s.strategy == SelectorConfig::Strategy::kWarm) {
          sink_.Error(t->pos, ctx_ + ".targets: \"" + id +
                                  "\" is a peer's model; warm targets must be local (a peer is "
                                  "never loaded)");
          ok = false;
        } else {
          s.targets.push_back(id);
        }
      } else if (m == nullptr) {
        sink_.Error(t->pos, ctx_ + ".targets: \"" + id + "\" is not a model, alias or peer model");
        ok = false;
      } else if (!seen.insert(m->id).second && s.strategy != SelectorConfig::Strategy::kPin) {
        sink_.Error(t->pos, ctx_ + ".targets: \"" + id + "\" names model \"" + m->id + "\" again");
        ok = false;
      } else {
        s.targets.push_back(id);
      }
    }
    for (const char* settings : {"settings", "balance"}) {
      const YamlEntry* e = node.Find(settings);
      const YamlEntry* n = e && e->value->is_map() ? e->value->Find("spillover") : nullptr;
      if (n == nullptr) continue;
      const nlohmann::json v = n->value->is_scalar() ? ScalarToJson(*n->value) : nullptr;
      if (!v.is_number_integer() || v.get<int64_t>() < 1) {
        sink_.Error(n->value->pos, ctx_ + "." + settings + ".spillover: expected an integer >= 1");
        ok = false;
      } else {
        s.spillover = v.get<int64_t>();
      }
    }
    auto text = [&](const char* key, std::string& out) {
      const YamlEntry* e = node.Find(key);
      if (e && e->value->is_scalar()) out = e->value->value;
    };
    text("name", s.name);
    text("description", s.description);
    if (const YamlEntry* u = node.Find("unlisted"); u && u->value->is_scalar()) {
      s.unlisted = Yaml12Bool(u->value->value).value_or(false);
    }
    if (const YamlEntry* m = node.Find("metadata"); m && m->value->is_map()) {
      s.metadata = NodeToJson(*m->value);
    }
    return ok;
  }

  // Spillover runs its local targets at the same time: they must be able to.
  bool Coexist(const YamlNode& node, const SelectorConfig& s) {
    std::vector<std::string> ids;
    for (const std::string& t : s.targets) {
      if (const ModelConfig* m = config_.FindModel(t)) ids.push_back(m->id);
    }
    if (s.strategy != SelectorConfig::Strategy::kSpillover || ids.size() < 2) return true;
    bool together = true;
    if (config_.matrix) {
      together = MatrixAllowsTogether(*config_.matrix, ids);
    } else {
      const std::string& group = config_.models.at(ids[0]).group;
      for (const std::string& id : ids) together &= config_.models.at(id).group == group;
      auto g = config_.groups.find(group);
      together &= g != config_.groups.end() && !g->second.swap;
    }
    if (!together) {
      sink_.Error(node.Find("targets")->value->pos,
                  ctx_ + ".targets: spillover runs its targets at once, but " +
                      (config_.matrix ? std::string("no matrix set holds them all")
                                      : std::string("they are not all in one group with "
                                                    "swap: false")));
    }
    return together;
  }

  const RawConfig& raw_;
  Config& config_;
  DiagnosticSink& sink_;
  std::string ctx_;
};

}  // namespace

const char* ToString(SelectorConfig::Strategy strategy) {
  switch (strategy) {
    case SelectorConfig::Strategy::kPin:
      return "pin";
    case SelectorConfig::Strategy::kWarm:
      return "warm";
    case SelectorConfig::Strategy::kSpillover:
      return "spillover";
  }
  return "unknown";
}

void LinkSelectors(const RawConfig& raw, Config& config, DiagnosticSink& sink) {
  if (raw.selectors) SelectorLinker(raw, config, sink).Link();
}

}  // namespace swapd
