#include "config/matrix.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <set>

namespace swapd {
namespace {

bool IsSetNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

// Recursive descent over: any := all ('|' all)* ; all := atom ('&' atom)* ;
// atom := name | '+' name | '(' any ')'.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  std::variant<MatrixExpr, MatrixParseError> Parse() {
    Skip();
    if (at_ == text_.size()) return MatrixParseError{"the expression is empty", 0};
    MatrixExpr expr = Any();
    if (!error_ && (Skip(), at_ != text_.size())) Fail("unexpected '" + Here() + "'");
    if (error_) return *error_;
    return expr;
  }

 private:
  MatrixExpr Any() { return Chain(MatrixExpr::Kind::kAny, '|', &Parser::All); }
  MatrixExpr All() { return Chain(MatrixExpr::Kind::kAll, '&', &Parser::Atom); }

  MatrixExpr Chain(MatrixExpr::Kind kind, char op, MatrixExpr (Parser::*next)()) {
    MatrixExpr first = (this->*next)();
    if (error_ || (Skip(), at_ == text_.size() || text_[at_] != op)) return first;
    MatrixExpr chain;
    chain.kind = kind;
    chain.children.push_back(std::move(first));
    while (!error_ && (Skip(), at_ < text_.size() && text_[at_] == op)) {
      ++at_;
      chain.children.push_back((this->*next)());
    }
    return chain;
  }

  MatrixExpr Atom() {
    Skip();
    if (at_ == text_.size()) {
      Fail("the expression ends where a model, a +set or '(' was expected");
      return {};
    }
    if (text_[at_] == '(') {
      ++at_;
      MatrixExpr inner = Any();
      Skip();
      if (!error_ && (at_ == text_.size() || text_[at_] != ')')) Fail("missing ')'");
      ++at_;
      return inner;
    }
    const size_t begin = at_;
    if (text_[at_] == '+') ++at_;
    const size_t name_begin = at_;
    while (at_ < text_.size() && IsSetNameChar(text_[at_])) ++at_;
    if (at_ == name_begin) {
      if (name_begin != begin) {
        Fail("'+' must be followed by the name of a set");
      } else {
        Fail("unexpected '" + Here() +
             "' (names are letters, digits, '_', '-' and '.'; a model id with other characters "
             "needs a var)");
      }
      return {};
    }
    MatrixExpr leaf;
    leaf.model = std::string(text_.substr(begin, at_ - begin));
    return leaf;
  }

  void Skip() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  std::string Here() const { return at_ < text_.size() ? std::string(1, text_[at_]) : ""; }
  void Fail(std::string message) {
    if (!error_) error_ = MatrixParseError{std::move(message), std::min(at_, text_.size())};
  }

  std::string_view text_;
  size_t at_ = 0;
  std::optional<MatrixParseError> error_;
};

using Combination = std::vector<std::string>;

std::vector<Combination> Expand(const MatrixExpr& e, size_t limit, bool* truncated) {
  switch (e.kind) {
    case MatrixExpr::Kind::kModel:
      return {{e.model}};
    case MatrixExpr::Kind::kAny: {
      std::vector<Combination> out;
      for (const MatrixExpr& child : e.children) {
        for (Combination& c : Expand(child, limit, truncated)) {
          if (out.size() == limit) {
            *truncated = true;
            return out;
          }
          out.push_back(std::move(c));
        }
      }
      return out;
    }
    case MatrixExpr::Kind::kAll: {
      std::vector<Combination> out = {{}};
      for (const MatrixExpr& child : e.children) {
        std::vector<Combination> next;
        for (const Combination& right : Expand(child, limit, truncated)) {
          for (const Combination& left : out) {
            if (next.size() == limit) {
              *truncated = true;
              break;
            }
            Combination both = left;
            both.insert(both.end(), right.begin(), right.end());
            next.push_back(std::move(both));
          }
        }
        out = std::move(next);
      }
      return out;
    }
  }
  return {};
}

}  // namespace

int64_t MatrixConfig::EvictCost(const std::string& model) const {
  auto it = evict_costs.find(model);
  return it == evict_costs.end() ? 1 : it->second;
}

std::variant<MatrixExpr, MatrixParseError> ParseMatrixExpr(std::string_view dsl) {
  return Parser(dsl).Parse();
}

std::vector<std::vector<std::string>> ExpandMatrixExpr(const MatrixExpr& expr, size_t limit,
                                                       bool* truncated) {
  bool more = false;
  std::vector<Combination> all = Expand(expr, limit, &more);
  std::vector<Combination> unique;
  for (Combination& c : all) {
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    if (std::find(unique.begin(), unique.end(), c) == unique.end()) unique.push_back(std::move(c));
  }
  if (truncated != nullptr) *truncated = more;
  return unique;
}

namespace {

// The subsets of `models` (bit i = models[i]) that combinations of `e` hold.
std::set<uint64_t> Project(const MatrixExpr& e, const std::vector<std::string>& models) {
  switch (e.kind) {
    case MatrixExpr::Kind::kModel: {
      auto it = std::find(models.begin(), models.end(), e.model);
      return {it == models.end() ? 0 : uint64_t{1} << (it - models.begin())};
    }
    case MatrixExpr::Kind::kAny: {
      std::set<uint64_t> out;
      for (const MatrixExpr& c : e.children) out.merge(Project(c, models));
      return out;
    }
    case MatrixExpr::Kind::kAll: {
      std::set<uint64_t> out = {0};
      for (const MatrixExpr& c : e.children) {
        const std::set<uint64_t> child = Project(c, models);
        std::set<uint64_t> next;
        for (uint64_t a : out) {
          for (uint64_t b : child) next.insert(a | b);
        }
        out = std::move(next);
      }
      return out;
    }
  }
  return {};
}

}  // namespace

bool MatrixAllowsTogether(const MatrixConfig& matrix, const std::vector<std::string>& models) {
  if (models.empty() || models.size() > 63) return models.empty();
  const uint64_t all = (uint64_t{1} << models.size()) - 1;
  for (const MatrixSet& set : matrix.sets) {
    if (Project(set.expr, models).count(all) != 0) return true;
  }
  return false;
}

}  // namespace swapd
