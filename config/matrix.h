// The matrix router's configuration (llama-swap's `routing.router.settings.matrix`, or the legacy
// top-level `matrix:`): named sets that say which models may run together, written in a small
// language (`&` together, `|` one of, `()` grouping, `+name` another set), and what evicting each
// model costs. Plain values, immutable once loaded.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace swapd {

struct MatrixExpr {
  enum class Kind { kModel, kAll, kAny };  // a model id; `a & b`; `a | b`
  Kind kind = Kind::kModel;
  std::string model;                 // kModel: a model id (vars resolved)
  std::vector<MatrixExpr> children;  // kAll, kAny
};

struct MatrixSet {
  std::string name;
  std::string dsl;  // as written
  MatrixExpr expr;  // `+name` references inlined
};

struct MatrixConfig {
  std::vector<MatrixSet> sets;                 // in definition order (the last tie-break)
  std::map<std::string, std::string> vars;     // short name -> model id
  std::map<std::string, int64_t> evict_costs;  // model id -> cost; a model missing costs 1

  int64_t EvictCost(const std::string& model) const;
};

// Parses one set's expression as written: kModel leaves hold the names as written, and a
// reference `+name` is a kModel leaf whose name keeps its '+'. `&` binds tighter than `|`. The
// error names the offending character by its offset in `dsl`.
struct MatrixParseError {
  std::string message;
  size_t offset = 0;
};
std::variant<MatrixExpr, MatrixParseError> ParseMatrixExpr(std::string_view dsl);

// Every combination a set allows (the Cartesian expansion), each sorted, at most `limit` of them;
// `truncated` tells whether more exist. For `swapd check` and tests, never for decisions.
std::vector<std::vector<std::string>> ExpandMatrixExpr(const MatrixExpr& expr, size_t limit,
                                                       bool* truncated);

// Whether one combination of some set holds every model of `models` (at most 63), found by
// projecting the sets onto those models, never by expanding them.
bool MatrixAllowsTogether(const MatrixConfig& matrix, const std::vector<std::string>& models);

}  // namespace swapd
