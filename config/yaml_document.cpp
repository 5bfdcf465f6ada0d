#include "config/yaml_document.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <map>
#include <sstream>

namespace swapd {
namespace {

constexpr std::string_view kMergeTag = "tag:yaml.org,2002:merge";

Position PositionAt(const std::string& file, const std::string& text, size_t offset) {
  Position pos{file, 1, 1};
  offset = std::min(offset, text.size());
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++pos.line;
      pos.column = 1;
    } else {
      ++pos.column;
    }
  }
  return pos;
}

bool IsMergeKey(const YamlNode& key) {
  return key.is_scalar() && ((key.plain && key.value == "<<") || key.tag == kMergeTag);
}

// Builds the node tree from yaml-cpp's parse events.
class TreeBuilder : public YAML::EventHandler {
 public:
  TreeBuilder(std::shared_ptr<const std::string> source, std::string file, DiagnosticSink& sink)
      : source_(std::move(source)), file_(std::move(file)), sink_(sink) {}

  YamlNodePtr root() const { return root_; }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override { CloseSpans(source_->size()); }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto node = NewNode(mark, YamlNode::Kind::kNull);
    Remember(anchor, node);
    Attach(node);
    open_.push_back(node);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    CloseSpans(static_cast<size_t>(mark.pos));
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {  // yaml-cpp throws first; kept for safety
      Attach(NewNode(mark, YamlNode::Kind::kNull));
      return;
    }
    for (const Frame& frame : stack_) {
      if (frame.node == it->second) {  // e.g. `a: &x [*x]`: a node that would contain itself
        sink_.Error(Position{file_, mark.line + 1, mark.column + 1},
                    "this alias is inside the node its anchor names: a node that contains "
                    "itself is not allowed");
        Attach(NewNode(mark, YamlNode::Kind::kNull));
        return;
      }
    }
    Attach(it->second);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    auto node = NewNode(mark, YamlNode::Kind::kScalar);
    node->value = value;
    node->plain = tag == "?";
    if (tag != "?" && tag != "!") node->tag = tag;
    Remember(anchor, node);
    Attach(node);
    open_.push_back(node);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    auto node = NewNode(mark, YamlNode::Kind::kSequence);
    if (tag != "?" && tag != "!") node->tag = tag;
    Remember(anchor, node);
    Attach(node);
    stack_.push_back(Frame{node, nullptr});
  }
  void OnSequenceEnd() override { Pop(); }

  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    auto node = NewNode(mark, YamlNode::Kind::kMap);
    if (tag != "?" && tag != "!") node->tag = tag;
    Remember(anchor, node);
    Attach(node);
    stack_.push_back(Frame{node, nullptr});
  }
  void OnMapEnd() override {
    if (!stack_.empty()) FinishMap(*stack_.back().node);
    Pop();
  }

 private:
  struct Frame {
    YamlNodePtr node;
    YamlNodePtr pending_key;
  };

  YamlNodePtr NewNode(const YAML::Mark& mark, YamlNode::Kind kind) {
    size_t offset = mark.pos < 0 ? 0 : static_cast<size_t>(mark.pos);
    CloseSpans(offset);
    auto node = std::make_shared<YamlNode>();
    node->kind = kind;
    node->pos = Position{file_, mark.line + 1, mark.column + 1};
    node->source = source_;
    node->begin = offset;
    node->end = source_->size();
    return node;
  }

  // A node's text ends where the next event starts.
  void CloseSpans(size_t offset) {
    for (const auto& n : open_) n->end = std::max(n->begin, offset);
    open_.clear();
  }

  void Remember(YAML::anchor_t anchor, const YamlNodePtr& node) {
    if (anchor != YAML::NullAnchor) anchors_[anchor] = node;
  }

  void Attach(const YamlNodePtr& node) {
    if (stack_.empty()) {
      if (!root_) root_ = node;
      return;
    }
    Frame& frame = stack_.back();
    if (frame.node->is_sequence()) {
      frame.node->items.push_back(node);
    } else if (!frame.pending_key) {
      frame.pending_key = node;
    } else {
      frame.node->entries.push_back(YamlEntry{frame.pending_key, node});
      frame.pending_key = nullptr;
    }
  }

  void Pop() {
    if (stack_.empty()) return;
    open_.push_back(stack_.back().node);
    stack_.pop_back();
  }

  // Applies `<<:` merge keys (explicit keys win, then earlier merged maps win) and reports
  // duplicate keys, which Go's yaml.v3 rejects.
  void FinishMap(YamlNode& map) {
    std::vector<YamlEntry> explicit_entries;
    std::map<std::string, const YamlNode*> seen;
    for (const auto& e : map.entries) {
      if (IsMergeKey(*e.key)) continue;
      explicit_entries.push_back(e);
      if (!e.key->is_scalar()) continue;
      auto [it, inserted] = seen.emplace(e.key->value, e.key.get());
      if (!inserted) {
        sink_.Error(e.key->pos, "duplicate key \"" + e.key->value + "\" (first defined at line " +
                                    std::to_string(it->second->pos.line) + ")");
      }
    }
    bool has_merge = explicit_entries.size() != map.entries.size();
    if (!has_merge) return;

    std::vector<YamlEntry> result;
    for (const auto& e : map.entries) {
      if (!IsMergeKey(*e.key)) {
        result.push_back(e);
        continue;
      }
      std::vector<YamlNodePtr> sources;
      if (e.value->is_map()) {
        sources.push_back(e.value);
      } else if (e.value->is_sequence()) {
        sources = e.value->items;
      }
      if (sources.empty() && !e.value->is_sequence()) {
        sink_.Error(e.value->pos, "the value of a merge key (<<) must be a map or a list of maps");
        continue;
      }
      for (const auto& src : sources) {
        if (!src->is_map()) {
          sink_.Error(src->pos, "the value of a merge key (<<) must be a map or a list of maps");
          continue;
        }
        for (const auto& m : src->entries) {
          if (m.key->is_scalar() && seen.count(m.key->value)) continue;
          if (m.key->is_scalar()) seen.emplace(m.key->value, m.key.get());
          result.push_back(m);
        }
      }
    }
    map.entries = std::move(result);
  }

  std::shared_ptr<const std::string> source_;
  std::string file_;
  DiagnosticSink& sink_;
  std::vector<Frame> stack_;
  YamlNodePtr root_;
  std::map<YAML::anchor_t, YamlNodePtr> anchors_;
  std::vector<YamlNodePtr> open_;  // nodes whose end is the next event's start
};

// Swallows the events of documents after the first.
class NullHandler : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

std::string_view KindName(YamlNode::Kind kind) {
  switch (kind) {
    case YamlNode::Kind::kNull:
      return "nothing";
    case YamlNode::Kind::kScalar:
      return "a scalar";
    case YamlNode::Kind::kSequence:
      return "a list";
    case YamlNode::Kind::kMap:
      return "a map";
  }
  return "?";
}

const YamlEntry* YamlNode::Find(std::string_view key) const {
  for (const auto& e : entries) {
    if (e.key->is_scalar() && e.key->value == key) return &e;
  }
  return nullptr;
}

Position YamlNode::Locate(std::string_view needle) const {
  if (!source || needle.empty()) return pos;
  size_t stop = std::min(end, source->size());
  if (begin >= stop) return pos;
  std::string_view span(source->data() + begin, stop - begin);
  size_t at = span.find(needle);
  if (at == std::string_view::npos) return pos;
  return PositionAt(pos.file, *source, begin + at);
}

bool YamlNode::Mentions(std::string_view needle) const {
  if (!source || begin >= std::min(end, source->size())) return false;
  std::string_view span(source->data() + begin, std::min(end, source->size()) - begin);
  return span.find(needle) != std::string_view::npos;
}

YamlNodePtr ParseYaml(std::string_view text, const std::string& file, DiagnosticSink& sink) {
  auto source = std::make_shared<const std::string>(text);
  std::istringstream in(*source);
  DiagnosticSink local;
  TreeBuilder builder(source, file, local);
  try {
    YAML::Parser parser(in);
    parser.HandleNextDocument(builder);
    try {
      NullHandler ignore;
      if (parser.HandleNextDocument(ignore)) {
        sink.Warning(PositionAt(file, *source, source->size()),
                     "only the first YAML document of the file is read");
      }
    } catch (const YAML::Exception&) {
      // Later documents are ignored, like llama-swap does; so are their syntax errors.
    }
  } catch (const YAML::Exception& e) {
    Position pos{file, e.mark.is_null() ? 0 : e.mark.line + 1,
                 e.mark.is_null() ? 0 : e.mark.column + 1};
    sink.Append(local.Take());
    sink.Error(pos, "YAML syntax error: " + e.msg);
    return nullptr;
  }
  sink.Append(local.Take());  // duplicate keys and bad merges: the tree is still usable
  YamlNodePtr root = builder.root();
  if (!root) {
    root = std::make_shared<YamlNode>();
    root->pos = Position{file, 1, 1};
    root->source = source;
    root->end = source->size();
  }
  return root;
}

}  // namespace swapd
