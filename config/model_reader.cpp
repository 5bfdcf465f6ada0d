#include "config/model_reader.h"

#include "config/macros.h"
#include "config/memory.h"
#include "config/schema_keys.h"

namespace swapd {
namespace {

class ModelReader {
 public:
  ModelReader(FieldReader& fields, DiagnosticSink& sink) : fields_(fields), sink_(sink) {}

  RawModel ReadModel(const YamlEntry& m) {
    RawModel model;
    model.id = m.key->value;
    model.pos = m.key->pos;
    const std::string ctx = ModelLabel(model.id) + ": ";
    if (m.value->is_null()) {
      sink_.Error(m.key->pos, ctx + "has no settings (cmd is required)");
      return model;
    }
    if (!m.value->is_map()) {
      sink_.Error(m.value->pos, ctx + "expected a map of settings, got " + Describe(*m.value));
      return model;
    }
    fields_.CheckKeys(*m.value, ModelKeys(), ctx, "models.*.");
    for (const auto& e : m.value->entries) {
      const std::string& key = e.key->value;
      auto text = [&](RawText& out) {
        if (auto v = fields_.Text(e, ctx)) out = *v;
      };
      if (key == "cmd") {
        text(model.cmd);
      } else if (key == "cmdStop") {
        text(model.cmd_stop);
      } else if (key == "proxy") {
        text(model.proxy);
      } else if (key == "checkEndpoint") {
        text(model.check_endpoint);
      } else if (key == "name") {
        text(model.name);
      } else if (key == "description") {
        text(model.description);
      } else if (key == "useModelName") {
        text(model.use_model_name);
      } else if (key == "aliases") {
        ReadAliases(e, ctx, model);
      } else if (key == "env") {
        model.env = fields_.TextList(e, ctx);
      } else if (key == "ttl") {
        if (auto v = fields_.Int(e, ctx)) {
          if (*v < -1) {
            sink_.Error(e.value->pos, ctx +
                                          "ttl: must be -1 (globalTTL), 0 (never) or a number "
                                          "of seconds, got " +
                                          std::to_string(*v));
          } else {
            model.ttl = *v;
          }
        }
      } else if (key == "unloadTimeout") {
        if (auto v = fields_.Int(e, ctx)) {
          if (*v < 0) {
            sink_.Error(e.value->pos,
                        ctx + "unloadTimeout: must be >= 0, got " + std::to_string(*v));
          } else {
            model.unload_timeout = *v;
          }
        }
      } else if (key == "concurrencyLimit") {
        if (auto v = fields_.Int(e, ctx)) {
          if (*v < 0) {
            sink_.Error(e.value->pos, ctx +
                                          "concurrencyLimit: must be > 0 (0 = the default, "
                                          "10), got " +
                                          std::to_string(*v));
          } else {
            model.concurrency_limit = *v;
          }
        }
      } else if (key == "unlisted") {
        if (auto v = fields_.Bool(e, ctx)) model.unlisted = *v;
      } else if (key == "macros") {
        model.macros = ReadMacros(*e.value, ctx, sink_);
      } else if (key == "healthCheckTimeout") {
        if (auto v = fields_.Int(e, ctx)) {
          if (*v < 0) {
            sink_.Error(e.value->pos, ctx +
                                          "healthCheckTimeout: must be >= 0 (0 = the top-level "
                                          "value), got " +
                                          std::to_string(*v));
          } else {
            model.health_check_timeout = *v;
          }
        }
      } else if (key == "capabilities") {
        if (fields_.IsMapOrError(e, ctx)) {
          fields_.CheckKeys(*e.value, CapabilitiesKeys(), ctx, "models.*.capabilities.");
          model.capabilities = e.value;
        }
      } else if (key == "timeouts") {
        if (fields_.IsMapOrError(e, ctx)) {
          fields_.CheckKeys(*e.value, TimeoutsKeys(), ctx, "models.*.timeouts.");
          model.timeouts = e.value;
        }
      } else if (key == "memory") {
        if (e.value->is_map()) {
          fields_.CheckKeys(*e.value, ModelMemoryKeys(), ctx, "models.*.memory.");
        }
        model.memory = ReadModelMemory(e, ctx, sink_);
      } else if (key == "pageCache") {
        if (auto v = fields_.Text(e, ctx)) {
          if (v->text == "keep" || v->text == "auto") {
            model.keep_page_cache = v->text == "keep";
          } else {
            sink_.Error(e.value->pos,
                        ctx + "pageCache: must be keep or auto, got \"" + v->text + "\"");
          }
        }
      } else if (key == "swappable") {
        if (auto v = fields_.Bool(e, ctx)) model.swappable = *v;
      } else if (key == "minResidency") {
        if (auto v = fields_.Int(e, ctx)) {
          if (*v < 0 || *v > 7 * 24 * 3600) {
            sink_.Error(e.value->pos,
                        ctx + "minResidency: expected seconds between 0 and 604800, got " +
                            std::to_string(*v));
          } else {
            model.min_residency = *v;
          }
        }
      } else if (key == "prefetch") {
        if (auto v = fields_.Bool(e, ctx)) model.prefetch = *v;
      } else if (key == "sendLoadingState") {
        if (auto v = fields_.Bool(e, ctx)) model.send_loading_state = *v;
      } else if (key == "metadata") {
        if (fields_.IsMapOrError(e, ctx)) model.metadata = e.value;
      } else if (key == "filters") {
        ReadFilters(e, ctx, model);
      }
    }
    return model;
  }

  // Strings, or (newer llama-swap) maps with an `id`.
  void ReadAliases(const YamlEntry& e, const std::string& ctx, RawModel& model) {
    if (e.value->is_null()) return;
    if (!e.value->is_sequence()) {
      sink_.Error(e.value->pos, ctx + "aliases: expected a list, got " + Describe(*e.value));
      return;
    }
    for (const auto& item : e.value->items) {
      if (item->is_scalar()) {
        model.aliases.push_back(RawText{item->value, item});
      } else if (item->is_map() && item->Find("id") && item->Find("id")->value->is_scalar()) {
        const YamlNodePtr& id = item->Find("id")->value;
        model.aliases.push_back(RawText{id->value, id});
        fields_.CheckKeys(*item, AliasKeys(), ctx + "alias " + id->value + ": ",
                          "models.*.aliases.*.");
      } else if (!item->is_null()) {
        sink_.Error(item->pos,
                    ctx + "aliases: expected a string in the list, got " + Describe(*item));
      }
    }
  }

  void ReadFilters(const YamlEntry& e, const std::string& ctx, RawModel& model) {
    if (!fields_.IsMapOrError(e, ctx)) return;
    const std::string fctx = ctx + "filters.";
    fields_.CheckKeys(*e.value, FilterKeys(), ctx, "models.*.filters.");
    for (const auto& f : e.value->entries) {
      const std::string& key = f.key->value;
      if (key == "stripParams" || (key == "strip_params" && !model.strip_params.present())) {
        if (auto v = fields_.Text(f, fctx)) model.strip_params = *v;
      } else if (key == "setParams") {
        if (fields_.IsMapOrError(f, fctx)) model.set_params = f.value;
      } else if (key == "setParamsByID") {
        if (fields_.IsMapOrError(f, fctx)) model.set_params_by_id = f.value;
      }
    }
  }

 private:
  FieldReader& fields_;
  DiagnosticSink& sink_;
};

}  // namespace

RawModel ReadModelEntry(const YamlEntry& m, FieldReader& fields, DiagnosticSink& sink) {
  return ModelReader(fields, sink).ReadModel(m);
}

}  // namespace swapd
