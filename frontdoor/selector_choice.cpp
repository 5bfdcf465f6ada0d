#include "frontdoor/selector_choice.h"

namespace swapd {
namespace {

bool Live(const TargetLoad& t) {
  return t.state == BackendState::kReady || t.state == BackendState::kStarting || t.busy > 0;
}

}  // namespace

size_t ChooseTarget(const SelectorConfig& selector, const std::vector<TargetLoad>& loads,
                    std::atomic<size_t>& round_robin) {
  using Strategy = SelectorConfig::Strategy;
  if (selector.strategy == Strategy::kPin || loads.empty()) return 0;
  if (selector.strategy == Strategy::kWarm) {
    for (BackendState wanted : {BackendState::kReady, BackendState::kStarting}) {
      for (size_t i = 0; i < loads.size(); ++i) {
        if (loads[i].state == wanted) return i;
      }
    }
    return 0;
  }
  // Spillover: the least busy live target while it has room, else the next cold one, else the
  // least busy ones in turn.
  int least = -1;
  for (const TargetLoad& t : loads) {
    if (Live(t) && (least < 0 || t.busy < least)) least = t.busy;
  }
  if (least >= 0 && least < selector.spillover) {
    for (size_t i = 0; i < loads.size(); ++i) {
      if (Live(loads[i]) && loads[i].busy == least) return i;
    }
  }
  for (size_t i = 0; i < loads.size(); ++i) {
    if (!Live(loads[i])) return i;
  }
  std::vector<size_t> tied;
  for (size_t i = 0; i < loads.size(); ++i) {
    if (loads[i].busy == least) tied.push_back(i);
  }
  return tied[round_robin++ % tied.size()];
}

}  // namespace swapd
