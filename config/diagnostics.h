// DiagnosticSink collects the errors, warnings and hints found while loading a config, so that
// every problem is reported rather than only the first. Internal to config/.
// Not synchronized: one sink belongs to one load.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"

namespace swapd {

class DiagnosticSink {
 public:
  void Error(const Position& pos, std::string message) {
    Add(Diagnostic::Severity::kError, pos, std::move(message));
  }
  void Warning(const Position& pos, std::string message) {
    Add(Diagnostic::Severity::kWarning, pos, std::move(message));
  }
  void Hint(const Position& pos, std::string message) {
    Add(Diagnostic::Severity::kHint, pos, std::move(message));
  }
  void Add(Diagnostic::Severity severity, const Position& pos, std::string message) {
    items_.push_back(Diagnostic{severity, pos, std::move(message)});
  }
  void Append(std::vector<Diagnostic> more) {
    for (auto& d : more) items_.push_back(std::move(d));
  }

  bool has_errors() const {
    for (const auto& d : items_) {
      if (d.severity == Diagnostic::Severity::kError) return true;
    }
    return false;
  }
  const std::vector<Diagnostic>& items() const { return items_; }
  std::vector<Diagnostic> Take() { return std::move(items_); }

 private:
  std::vector<Diagnostic> items_;
};

}  // namespace swapd
