#include "config/merge.h"

#include <algorithm>

namespace swapd {
namespace {

std::string Where(const Position& p) { return p.ToString(); }

// Keys under which each entry is a whole definition that two files may not both give.
bool IsDefinitionMap(const std::string& path) {
  return path == "models" || path == "groups" || path == "routing.router.settings.groups";
}

std::string Label(const std::string& path, const std::string& key) {
  if (path == "models") return "model \"" + key + "\"";
  if (path == "groups" || path == "routing.router.settings.groups") {
    return "group \"" + key + "\"";
  }
  return path.empty() ? key : path + "." + key;
}

YamlNodePtr Merge(const YamlNodePtr& a, const YamlNodePtr& b, const std::string& path,
                  DiagnosticSink& sink) {
  if (a->is_null()) return b;
  if (b->is_null()) return a;
  const std::string name = path.empty() ? "the config" : path;
  if (a->kind != b->kind) {
    sink.Error(b->pos, name + " is " + std::string(KindName(b->kind)) + " here but " +
                           std::string(KindName(a->kind)) + " at " + Where(a->pos));
    return a;
  }
  if (a->is_scalar()) {
    if (a->value != b->value) {
      sink.Error(b->pos, name + " is set to \"" + b->value + "\" here and to \"" + a->value +
                             "\" at " + Where(a->pos));
    }
    return a;
  }
  auto merged = std::make_shared<YamlNode>(*a);
  if (a->is_sequence()) {
    merged->items.insert(merged->items.end(), b->items.begin(), b->items.end());
    return merged;
  }
  for (const auto& e : b->entries) {
    auto it = std::find_if(merged->entries.begin(), merged->entries.end(), [&](const YamlEntry& x) {
      return x.key->is_scalar() && e.key->is_scalar() && x.key->value == e.key->value;
    });
    if (it == merged->entries.end()) {
      merged->entries.push_back(e);
      continue;
    }
    if (IsDefinitionMap(path)) {
      sink.Error(e.key->pos, Label(path, e.key->value) + " is defined twice: here and at " +
                                 Where(it->key->pos));
      continue;
    }
    it->value =
        Merge(it->value, e.value, path.empty() ? e.key->value : path + "." + e.key->value, sink);
  }
  return merged;
}

}  // namespace

YamlNodePtr MergeTrees(const std::vector<YamlNodePtr>& files, DiagnosticSink& sink) {
  YamlNodePtr result;
  for (const auto& root : files) {
    if (!root) continue;
    result = result ? Merge(result, root, "", sink) : root;
  }
  if (!result) result = std::make_shared<YamlNode>();
  return result;
}

}  // namespace swapd
