#include "config/config_reader.h"

#include <algorithm>
#include <array>

#include "config/field_reader.h"
#include "config/memory.h"
#include "config/model_reader.h"
#include "config/performance_settings.h"
#include "config/schema_keys.h"
#include "config/slot_cache_settings.h"
#include "config/store_settings.h"
#include "config/ui_settings.h"

namespace swapd {
namespace {

constexpr std::array<std::string_view, 4> kLogLevels = {"debug", "info", "warn", "error"};
constexpr std::array<std::string_view, 4> kLogToStdout = {"proxy", "upstream", "both", "none"};

template <size_t N>
bool OneOf(const std::string& v, const std::array<std::string_view, N>& values) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

class ConfigReader {
 public:
  ConfigReader(bool strict, DiagnosticSink& sink) : fields_(strict, sink), sink_(sink) {}

  RawConfig Read(const YamlNode& root) {
    RawConfig raw;
    if (root.is_null()) return raw;
    if (!root.is_map()) {
      sink_.Error(root.pos, "the config must be a map of settings, got " + Describe(root));
      return raw;
    }
    fields_.CheckKeys(root, TopLevelKeys(), "", "");
    const YamlEntry* top_groups = nullptr;
    const YamlEntry* routing = nullptr;
    for (const auto& e : root.entries) {
      const std::string& key = e.key->value;
      if (key == "macros") {
        raw.macros = ReadMacros(*e.value, "", sink_);
      } else if (key == "models") {
        ReadModels(e, raw);
      } else if (key == "groups") {
        top_groups = &e;
      } else if (key == "routing") {
        routing = &e;
      } else if (key == "hooks") {
        ReadHooks(e, raw);
      } else if (key == "profiles") {
        ReadProfiles(e, raw);
      } else if (key == "selectors") {
        if (fields_.IsMapOrError(e, "")) {
          for (const auto& sel : e.value->entries) {
            if (sel.value->is_map()) {
              fields_.CheckKeys(*sel.value, SelectorKeys(), "selectors." + sel.key->value + ": ",
                                "selectors.*.");
            }
          }
          raw.selectors = e.value;
        }
      } else if (key == "peers") {
        ReadPeers(e, raw);
      } else if (key == "store") {
        ReadStoreSection(e, fields_, raw.globals, raw.store_set);
      } else if (key == "ui") {
        ReadUiSection(e, fields_, raw.globals);
      } else if (key == "memory") {
        ReadMemorySection(e, fields_, raw.globals.memory);
      } else if (key == "performance") {
        ReadPerformanceSection(e, fields_, raw.globals);
      } else if (key == "apiKeys") {
        raw.api_keys = fields_.TextList(e, "");
      } else {
        ReadSetting(e, raw.globals);
      }
    }
    ReadRouting(root, top_groups, routing, raw);
    fields_.ReportUnsupported();
    return raw;
  }

 private:
  // Checked for keys here; read by LinkPeers.
  void ReadPeers(const YamlEntry& e, RawConfig& raw) {
    if (!fields_.IsMapOrError(e, "")) return;
    for (const auto& peer : e.value->entries) {
      if (!peer.value->is_map()) continue;
      const std::string ctx = "peers." + peer.key->value + ": ";
      fields_.CheckKeys(*peer.value, PeerKeys(), ctx, "peers.*.");
      if (const YamlEntry* f = peer.value->Find("filters"); f && fields_.IsMapOrError(*f, ctx)) {
        fields_.CheckKeys(*f->value, PeerFilterKeys(), ctx + "filters: ", "peers.*.filters.");
      }
      if (const YamlEntry* t = peer.value->Find("timeouts"); t && fields_.IsMapOrError(*t, ctx)) {
        fields_.CheckKeys(*t->value, TimeoutsKeys(), ctx + "timeouts: ", "peers.*.timeouts.");
      }
    }
    raw.peers = e.value;
  }

  void ReadSetting(const YamlEntry& e, Config& c) {
    const std::string& key = e.key->value;
    if (ReadSlotCacheSetting(e, fields_, c)) return;
    if (key == "healthCheckTimeout") {
      if (auto v = fields_.Int(e, "")) {
        if (*v < 15) {
          sink_.Hint(e.value->pos,
                     "healthCheckTimeout " + std::to_string(*v) +
                         " is raised to 15 seconds, the minimum (as llama-swap does)");
          *v = 15;
        }
        c.health_check_timeout = std::chrono::seconds(*v);
      }
    } else if (key == "logLevel") {
      if (auto v = fields_.Text(e, "")) {
        if (OneOf(v->text, kLogLevels)) {
          c.log_level = v->text;
        } else {
          sink_.Error(e.value->pos,
                      "logLevel: must be one of debug, info, warn, error; got \"" + v->text + "\"");
        }
      }
    } else if (key == "logToStdout") {
      if (auto v = fields_.Text(e, "")) {
        if (OneOf(v->text, kLogToStdout)) {
          c.log_to_stdout = v->text;
        } else {
          sink_.Error(
              e.value->pos,
              "logToStdout: must be one of proxy, upstream, both, none; got \"" + v->text + "\"");
        }
      }
    } else if (key == "startPort") {
      if (auto v = fields_.Int(e, "")) {
        if (*v < 1 || *v > 65535) {
          sink_.Error(e.value->pos,
                      "startPort: must be between 1 and 65535, got " + std::to_string(*v));
        } else {
          c.start_port = static_cast<int>(*v);
        }
      }
    } else if (key == "globalTTL") {
      if (auto v = fields_.Int(e, "")) {
        if (*v < 0) {
          sink_.Error(e.value->pos,
                      "globalTTL: must be >= 0 (0 = never unload), got " + std::to_string(*v));
        } else {
          c.global_ttl = std::chrono::seconds(*v);
        }
      }
    } else if (key == "unloadTimeout") {
      if (auto v = fields_.Int(e, "")) {
        if (*v < 0) {
          sink_.Error(e.value->pos, "unloadTimeout: must be >= 0, got " + std::to_string(*v));
        } else {
          c.unload_timeout = std::chrono::seconds(*v == 0 ? 10 : *v);  // 0 = the default
        }
      }
    } else if (key == "captureBuffer") {
      if (auto v = fields_.Int(e, "")) {
        if (*v < 0) {
          sink_.Error(e.value->pos, "captureBuffer: must be >= 0 (MB; 0 = no captures), got " +
                                        std::to_string(*v));
        } else {
          c.capture_buffer_mb = *v;
        }
      }
    } else if (key == "sendLoadingState") {
      if (auto v = fields_.Bool(e, "")) c.send_loading_state = *v;
    } else if (key == "ownedBy") {
      if (auto v = fields_.Text(e, "")) {
        if (v->text.empty()) {
          sink_.Error(e.value->pos, "ownedBy: expected a non-empty string");
        } else {
          c.owned_by = v->text;
        }
      }
    } else if (key == "includeAliasesInList") {
      if (auto v = fields_.Bool(e, "")) c.include_aliases_in_list = *v;
    }
  }

  // profiles: {name: {description, pins: {id: target}}}; `~` or "" as a target disables the id.
  void ReadProfiles(const YamlEntry& e, RawConfig& raw) {
    if (!fields_.IsMapOrError(e, "")) return;
    for (const auto& p : e.value->entries) {
      RawProfile profile{p.key->value, "", {}, p.key->pos};
      const std::string ctx = "profiles." + profile.name + ": ";
      if (p.value->is_sequence()) {
        sink_.Error(p.value->pos, ctx +
                                      "a list of models is the old form, which llama-swap no "
                                      "longer reads: write {pins: {id: model}}");
        continue;
      }
      if (!fields_.IsMapOrError(p, "profiles: ")) continue;
      fields_.CheckKeys(*p.value, ProfileKeys(), ctx, "profiles.*.");
      if (const YamlEntry* d = p.value->Find("description")) {
        if (auto v = fields_.Text(*d, ctx)) profile.description = v->text;
      }
      const YamlEntry* pins = p.value->Find("pins");
      if (pins && fields_.IsMapOrError(*pins, ctx)) {
        for (const auto& pin : pins->value->entries) {
          if (!pin.value->is_null() && !pin.value->is_scalar()) {
            sink_.Error(pin.value->pos, ctx + "pins." + pin.key->value +
                                            ": expected a model id or alias, or ~ to disable it");
            continue;
          }
          profile.pins.push_back(RawPin{pin.key->value,
                                        pin.value->is_null() ? "" : pin.value->value, pin.key->pos,
                                        pin.value->pos});
        }
      }
      raw.profiles.push_back(std::move(profile));
    }
  }

  void ReadHooks(const YamlEntry& e, RawConfig& raw) {
    if (!fields_.IsMapOrError(e, "")) return;
    fields_.CheckKeys(*e.value, HooksKeys(), "", "hooks.");
    const YamlEntry* on_startup = e.value->Find("on_startup");
    if (!on_startup || !fields_.IsMapOrError(*on_startup, "hooks: ")) return;
    fields_.CheckKeys(*on_startup->value, OnStartupKeys(), "", "hooks.on_startup.");
    if (const YamlEntry* preload = on_startup->value->Find("preload")) {
      raw.preload = fields_.TextList(*preload, "hooks.on_startup: ");
    }
  }

  void ReadModels(const YamlEntry& e, RawConfig& raw) {
    if (!fields_.IsMapOrError(e, "")) return;
    for (const auto& m : e.value->entries) {
      if (!m.key->is_scalar()) {
        sink_.Error(m.key->pos, "models: a model id must be a plain name, not " +
                                    std::string(KindName(m.key->kind)));
        continue;
      }
      raw.models.push_back(ReadModelEntry(m, fields_, sink_));
    }
  }

  // `parent` prefixes type errors: "" for `groups:`, "routing.router.settings." otherwise.
  void ReadGroups(const YamlEntry& e, const std::string& parent, RawConfig& raw) {
    if (!fields_.IsMapOrError(e, parent)) return;
    for (const auto& g : e.value->entries) {
      RawGroup group;
      group.name = g.key->value;
      group.pos = g.key->pos;
      const std::string ctx = "group \"" + group.name + "\": ";
      if (g.value->is_null()) {
        raw.groups.push_back(group);
        continue;
      }
      if (!g.value->is_map()) {
        sink_.Error(g.value->pos, ctx + "expected a map, got " + Describe(*g.value));
        continue;
      }
      fields_.CheckKeys(*g.value, GroupKeys(), ctx, "groups.*.");
      for (const auto& f : g.value->entries) {
        const std::string& key = f.key->value;
        if (key == "swap") {
          if (auto v = fields_.Bool(f, ctx)) group.swap = *v;
        } else if (key == "exclusive") {
          if (auto v = fields_.Bool(f, ctx)) group.exclusive = *v;
          group.exclusive_set = true;
        } else if (key == "persistent") {
          if (auto v = fields_.Bool(f, ctx)) group.persistent = *v;
        } else if (key == "members") {
          group.members = fields_.TextList(f, ctx);
        }
      }
      raw.groups.push_back(std::move(group));
    }
  }

  // Groups or the matrix come from the legacy top-level `groups:`/`matrix:` or from
  // `routing.router`, never both styles (llama-swap refuses a config that mixes them). The
  // matrix's contents are read by LinkMatrix (matrix_link.h), which knows the models.
  void ReadRouting(const YamlNode& root, const YamlEntry* top_groups, const YamlEntry* routing,
                   RawConfig& raw) {
    const YamlEntry* matrix = root.Find("matrix");
    bool has_top_groups =
        top_groups && top_groups->value->is_map() && !top_groups->value->entries.empty();
    if (matrix && has_top_groups) {
      sink_.Error(matrix->key->pos, "a config cannot use both groups and matrix");
    }
    if (has_top_groups)
      ReadGroups(*top_groups, "", raw);
    else if (top_groups)
      fields_.IsMapOrError(*top_groups, "");
    if (matrix && !has_top_groups && fields_.IsMapOrError(*matrix, "")) {
      fields_.CheckKeys(*matrix->value, MatrixKeys(), "matrix: ", "matrix.");
      raw.matrix = matrix->value;
      raw.matrix_key = matrix->key->pos;
    }

    if (!routing || !fields_.IsMapOrError(*routing, "")) return;
    fields_.CheckKeys(*routing->value, RoutingKeys(), "", "routing.");
    if (const YamlEntry* scheduler = routing->value->Find("scheduler")) {
      ReadScheduler(*scheduler, raw);
    }
    const YamlEntry* router = routing->value->Find("router");
    if (!router || !fields_.IsMapOrError(*router, "routing: ")) return;
    fields_.CheckKeys(*router->value, RouterKeys(), "", "routing.router.");
    if (has_top_groups || matrix) {
      sink_.Error(router->key->pos, "routing.router cannot be used together with the top-level " +
                                        std::string(has_top_groups ? "groups" : "matrix") +
                                        " key: move them into routing.router.settings");
      return;
    }
    std::string use = "group";
    const YamlEntry* use_entry = router->value->Find("use");
    if (use_entry) {
      if (auto v = fields_.Text(*use_entry, "routing.router.")) use = v->text;
      if (use != "group" && use != "matrix") {
        sink_.Error(use_entry->value->pos,
                    "routing.router.use: must be group or matrix, got \"" + use + "\"");
      }
    }
    const YamlEntry* settings = router->value->Find("settings");
    if (!settings || !fields_.IsMapOrError(*settings, "routing.router: ")) {
      if (use == "matrix") {
        sink_.Error(router->key->pos,
                    "routing.router.use is matrix but routing.router.settings."
                    "matrix is missing");
      }
      return;
    }
    fields_.CheckKeys(*settings->value, RouterSettingsKeys(), "", "routing.router.settings.");
    const YamlEntry* groups = settings->value->Find("groups");
    const YamlEntry* settings_matrix = settings->value->Find("matrix");
    if (use == "group" && groups) ReadGroups(*groups, "routing.router.settings.", raw);
    if (use == "matrix") {
      if (!settings_matrix) {
        sink_.Error(use_entry->value->pos,
                    "routing.router.use is matrix but routing.router.settings.matrix is missing");
      } else if (fields_.IsMapOrError(*settings_matrix, "routing.router.settings.")) {
        fields_.CheckKeys(*settings_matrix->value, MatrixKeys(),
                          "matrix: ", "routing.router.settings.matrix.");
        raw.matrix = settings_matrix->value;
        raw.matrix_key = settings_matrix->key->pos;
      }
    }
    // The engine not chosen by `use` is ignored, as llama-swap does; say so.
    const YamlEntry* unused = use == "matrix" ? groups : settings_matrix;
    if (unused) {
      sink_.Warning(unused->key->pos, "routing.router.settings." + unused->key->value +
                                          ": ignored, routing.router.use is " + use);
    }
  }

  // routing.scheduler: {use: fifo, settings: {fifo: {priority: {model: N}}}}. Higher first.
  void ReadScheduler(const YamlEntry& scheduler, RawConfig& raw) {
    if (!fields_.IsMapOrError(scheduler, "routing.")) return;
    fields_.CheckKeys(*scheduler.value, SchedulerKeys(), "", "routing.scheduler.");
    if (const YamlEntry* use = scheduler.value->Find("use")) {
      auto v = fields_.Text(*use, "routing.scheduler.");
      if (v && v->text != "fifo") {
        sink_.Error(use->value->pos,
                    "routing.scheduler.use: the only scheduler is fifo, got \"" + v->text + "\"");
      }
    }
    const YamlEntry* settings = scheduler.value->Find("settings");
    if (!settings || !fields_.IsMapOrError(*settings, "routing.scheduler.")) return;
    fields_.CheckKeys(*settings->value, SchedulerSettingsKeys(), "", "routing.scheduler.settings.");
    const YamlEntry* fifo = settings->value->Find("fifo");
    if (!fifo || !fields_.IsMapOrError(*fifo, "routing.scheduler.settings.")) return;
    fields_.CheckKeys(*fifo->value, FifoKeys(), "", "routing.scheduler.settings.fifo.");
    const YamlEntry* priority = fifo->value->Find("priority");
    if (!priority || !fields_.IsMapOrError(*priority, "routing.scheduler.settings.fifo.")) return;
    for (const auto& p : priority->value->entries) {
      auto n = fields_.Int(p, "routing.scheduler.settings.fifo.priority.");
      if (n) raw.priority.push_back(RawPriority{p.key->value, *n, p.key->pos});
    }
  }

  FieldReader fields_;
  DiagnosticSink& sink_;
};

}  // namespace

RawConfig ReadConfigTree(const YamlNode& root, bool strict, DiagnosticSink& sink) {
  return ConfigReader(strict, sink).Read(root);
}

}  // namespace swapd
