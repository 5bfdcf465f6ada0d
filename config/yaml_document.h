// A YAML file as a small tree of nodes that remember where they are (file:line:col and their span
// of text), so that every config diagnostic can point at the offending node. This is the only
// part of swapd that uses yaml-cpp; its exceptions become diagnostics here. Anchors, aliases and
// `<<:` merge keys are resolved, and duplicate keys are reported, as Go's yaml.v3 (llama-swap)
// would. Scalars keep their text: typing them is yaml_scalar.h's job.
// Nodes are plain values; a tree is not synchronized (one load owns it).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "config/diagnostics.h"

namespace swapd {

struct YamlNode;
using YamlNodePtr = std::shared_ptr<YamlNode>;

struct YamlEntry {
  YamlNodePtr key;
  YamlNodePtr value;
};

struct YamlNode {
  enum class Kind { kNull, kScalar, kSequence, kMap };

  Kind kind = Kind::kNull;
  std::string value;  // the text of a scalar
  // An untagged plain (unquoted, non-block) scalar: the only kind whose type is resolved
  // (`8080` is an int, `true` a bool, `on` stays a string).
  bool plain = false;
  std::string tag;                 // explicit tag such as "tag:yaml.org,2002:str"; "" if none
  std::vector<YamlNodePtr> items;  // kSequence
  std::vector<YamlEntry> entries;  // kMap, in file order, merge keys already applied
  Position pos;                    // where the node starts

  // The node's span [begin, end) in the text of its file (end may include trailing comments).
  std::shared_ptr<const std::string> source;
  size_t begin = 0;
  size_t end = 0;

  bool is_null() const { return kind == Kind::kNull; }
  bool is_scalar() const { return kind == Kind::kScalar; }
  bool is_map() const { return kind == Kind::kMap; }
  bool is_sequence() const { return kind == Kind::kSequence; }

  // The entry whose key is the scalar `key`, or nullptr.
  const YamlEntry* Find(std::string_view key) const;
  // Where `needle` first occurs inside this node's text; `pos` when it does not.
  Position Locate(std::string_view needle) const;
  // Whether `needle` is written inside this node's text.
  bool Mentions(std::string_view needle) const;
};

// "a scalar", "a map", ... for messages.
std::string_view KindName(YamlNode::Kind kind);

// Parses the first document of `text`. Returns nullptr after reporting a syntax error (with the
// position yaml-cpp gives) to `sink`. An empty document is a kNull root.
YamlNodePtr ParseYaml(std::string_view text, const std::string& file, DiagnosticSink& sink);

}  // namespace swapd
