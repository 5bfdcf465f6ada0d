#include "config/validate.h"

#include <algorithm>
#include <map>
#include <set>

#include "base/text.h"
#include "config/argv_split.h"
#include "config/macros.h"
#include "config/matrix_link.h"
#include "config/peers.h"
#include "config/selectors.h"

namespace swapd {
namespace {

void LinkAliases(const RawConfig& raw, Config& config, DiagnosticSink& sink) {
  for (const auto& model : raw.models) {
    for (const auto& alias : model.aliases) {
      const std::string ctx = ModelLabel(model.id) + ": alias \"" + alias.text + "\"";
      if (alias.text.empty()) {
        sink.Error(alias.node->pos, ModelLabel(model.id) + ": an alias cannot be empty");
      } else if (config.models.count(alias.text)) {
        sink.Error(alias.node->pos, ctx + " is the id of " +
                                        (alias.text == model.id ? std::string("the model itself")
                                                                : ModelLabel(alias.text)));
      } else if (auto [it, inserted] = config.aliases.emplace(alias.text, model.id); !inserted) {
        sink.Error(alias.node->pos, ctx + (it->second == model.id ? std::string(" is listed twice")
                                                                  : " is already an alias of " +
                                                                        ModelLabel(it->second)));
      }
    }
  }
  // Each filters.setParamsByID key but the model's own id is an alias of the model too.
  for (auto& [id, model] : config.models) {
    for (const auto& [key, by_id] : model.set_params_by_id) {
      if (key == id) continue;
      const std::string ctx = ModelLabel(id) + ": filters.setParamsByID \"" + key + "\"";
      if (config.models.count(key)) {
        sink.Error(by_id.pos, ctx + " is the id of " + ModelLabel(key));
      } else if (auto [it, inserted] = config.aliases.emplace(key, id); inserted) {
        model.aliases.push_back(key);
      } else if (it->second != id) {
        sink.Error(by_id.pos, ctx + " is already an alias of " + ModelLabel(it->second));
      }
    }
  }
}

void LinkGroups(const RawConfig& raw, Config& config, bool complete, DiagnosticSink& sink) {
  std::map<std::string, std::string> group_of;  // model id -> group name
  for (const auto& g : raw.groups) {
    const std::string ctx = "group \"" + g.name + "\": ";
    if (g.name == kDefaultGroup) {
      sink.Error(g.pos, ctx + "the name " + std::string(kDefaultGroup) +
                            " is reserved for the models in no group");
      continue;
    }
    GroupConfig group{g.name, g.swap, g.exclusive, g.persistent, {}, g.pos};
    std::set<std::string> in_this_group;
    for (const auto& member : g.members) {
      const std::string& id = member.text;
      if (!config.models.count(id)) {
        if (!complete) continue;
        std::string message = ctx + "member \"" + id + "\" is not a model";
        if (auto a = config.aliases.find(id); a != config.aliases.end()) {
          message += " (it is an alias of " + ModelLabel(a->second) + ": list the model id)";
        }
        sink.Error(member.node->pos, message);
        continue;
      }
      if (!in_this_group.insert(id).second) {
        sink.Error(member.node->pos, ctx + "member \"" + id + "\" is listed twice");
        continue;
      }
      if (auto [it, inserted] = group_of.emplace(id, g.name); !inserted) {
        sink.Error(member.node->pos, ModelLabel(id) + " is in two groups: \"" + it->second +
                                         "\" and \"" + g.name + "\"");
        continue;
      }
      group.members.push_back(id);
    }
    config.groups[g.name] = std::move(group);
  }

  // With memory budgets, ungrouped models are not swapped one for another: the budget decides
  // which of them fit together.
  const bool budget = config.memory.HasBudget();
  GroupConfig fallback{std::string(kDefaultGroup), !budget, !budget, false, {}, {}};
  for (auto& [id, model] : config.models) {
    if (auto it = group_of.find(id); it != group_of.end()) {
      model.group = it->second;
    } else {
      model.group = std::string(kDefaultGroup);
      fallback.members.push_back(id);  // sorted, like llama-swap's
    }
  }
  if (!fallback.members.empty()) config.groups[std::string(kDefaultGroup)] = std::move(fallback);
}

// llama-swap groups are exclusive unless they say otherwise, which surprises people who only
// wrote `swap: false` to keep two models together.
void HintImplicitExclusive(const RawConfig& raw, const Config& config, DiagnosticSink& sink) {
  for (const auto& g : raw.groups) {
    if (g.exclusive_set || !g.exclusive) continue;
    auto self = config.groups.find(g.name);
    if (self == config.groups.end() || self->second.members.empty()) continue;
    std::vector<std::string> victims;
    for (const auto& [name, other] : config.groups) {
      if (name != g.name && !other.persistent && !other.members.empty()) victims.push_back(name);
    }
    if (victims.empty()) continue;
    std::string names;
    for (size_t i = 0; i < victims.size() && i < 3; ++i) names += (i ? ", " : "") + victims[i];
    if (victims.size() > 3) names += ", ...";
    sink.Hint(g.pos, "group \"" + g.name +
                         "\" is exclusive by default: loading it unloads the "
                         "other groups (" +
                         names +
                         "); write exclusive: false to keep them running, "
                         "or exclusive: true to silence this hint");
  }
}

void LinkPreload(const RawConfig& raw, Config& config, bool complete, DiagnosticSink& sink) {
  for (const auto& p : raw.preload) {
    std::string id(TrimSpace(p.text));
    if (id.empty()) continue;
    const ModelConfig* model = config.FindModel(id);
    if (!model) {
      if (!complete) continue;
      sink.Error(p.node->pos, "hooks.on_startup.preload: \"" + id + "\" is not a model or alias");
      continue;
    }
    if (std::find(config.preload.begin(), config.preload.end(), model->id) ==
        config.preload.end()) {
      config.preload.push_back(model->id);
    }
  }
}

void HintWindowsMacros(const RawConfig& raw, DiagnosticSink& sink) {
  for (const auto& macro : raw.macros) {
    if (macro.value.is_string() && HasWindowsPath(macro.value.get<std::string>())) {
      sink.Hint(macro.pos, "macro \"" + macro.name + "\" " + std::string(kWindowsPathHint));
    }
  }
}

// A pin's target is a model id or alias; a pin of a model id never applies (ids always win).
void LinkProfiles(const RawConfig& raw, Config& config, DiagnosticSink& sink) {
  for (const RawProfile& p : raw.profiles) {
    ProfileConfig profile{p.name, p.description, {}, p.pos};
    const std::string ctx = "profiles." + p.name + ".pins.";
    for (const RawPin& pin : p.pins) {
      if (config.models.count(pin.id) != 0) {
        sink.Warning(pin.pos, ctx + pin.id +
                                  ": a model id, which always wins over pins: this "
                                  "pin never applies");
        continue;
      }
      if (!pin.target.empty() && config.FindModel(pin.target) == nullptr &&
          config.selectors.count(pin.target) == 0 && config.FindPeerModel(pin.target) == nullptr) {
        sink.Error(pin.target_pos, ctx + pin.id + ": \"" + pin.target +
                                       "\" is not a model, alias, selector or peer model");
        continue;
      }
      profile.pins[pin.id] = pin.target;
    }
    config.profiles[p.name] = std::move(profile);
  }
}

void LinkApiKeys(const RawConfig& raw, Config& config, DiagnosticSink& sink) {
  for (const auto& k : raw.api_keys) {
    std::string key = ExpandMacros(k.text, raw.macros);
    bool ok = true;
    for (const auto& ref : FindMacroRefs(key)) {
      sink.Error(k.node->Locate("${" + ref + "}"), "apiKeys: unknown macro ${" + ref + "}");
      ok = false;
    }
    if (key.empty()) {
      sink.Error(k.node->pos, "apiKeys: an API key cannot be empty");
    } else if (key.find_first_of(" \t\n") != std::string::npos) {
      sink.Error(k.node->pos, "apiKeys: an API key cannot contain spaces");
    } else if (ok) {
      config.api_keys.push_back(std::move(key));
    }
  }
}

}  // namespace

void LinkAndValidate(const RawConfig& raw, Config& config, bool complete, DiagnosticSink& sink) {
  LinkAliases(raw, config, sink);
  LinkGroups(raw, config, complete, sink);
  HintImplicitExclusive(raw, config, sink);
  LinkPreload(raw, config, complete, sink);
  LinkMatrix(raw, config, sink);
  LinkPriority(raw, config, sink);
  LinkPeers(raw, config, sink);
  LinkSelectors(raw, config, sink);
  LinkProfiles(raw, config, sink);
  LinkApiKeys(raw, config, sink);
  HintWindowsMacros(raw, sink);
}

}  // namespace swapd
