// Which target a selector picks: pin, warm (ready, then starting, then the first) and spillover
// (the least busy live target while it has room, then a cold one, then the least busy in turn).
#include "frontdoor/selector_choice.h"

#include <catch2/catch.hpp>

namespace swapd {
namespace {

using S = BackendState;

SelectorConfig Selector(SelectorConfig::Strategy strategy, int64_t spillover = 1) {
  SelectorConfig s;
  s.strategy = strategy;
  s.targets = {"a", "b", "c"};
  s.spillover = spillover;
  return s;
}

TEST_CASE("pin and warm selectors", "[unit][front][selectors]") {
  std::atomic<size_t> rr{0};
  auto pin = Selector(SelectorConfig::Strategy::kPin);
  CHECK(ChooseTarget(pin, {{S::kStopped, 0}, {S::kReady, 0}, {S::kReady, 0}}, rr) == 0);
  auto warm = Selector(SelectorConfig::Strategy::kWarm);
  CHECK(ChooseTarget(warm, {{S::kStopped, 0}, {S::kStarting, 0}, {S::kReady, 0}}, rr) == 2);
  CHECK(ChooseTarget(warm, {{S::kStopping, 0}, {S::kStarting, 0}, {S::kStopped, 0}}, rr) == 1);
  CHECK(ChooseTarget(warm, {{S::kFailed, 0}, {S::kStopped, 0}, {S::kStopped, 0}}, rr) == 0);
}

TEST_CASE("spillover fills the live target, then wakes the next, then takes turns",
          "[unit][front][selectors]") {
  std::atomic<size_t> rr{0};
  auto s = Selector(SelectorConfig::Strategy::kSpillover, 2);
  // Nothing runs: the first cold target.
  CHECK(ChooseTarget(s, {{S::kStopped, 0}, {S::kStopped, 0}, {S::kStopped, 0}}, rr) == 0);
  // b is live with room (1 < 2): b, though a comes first.
  CHECK(ChooseTarget(s, {{S::kStopped, 0}, {S::kReady, 1}, {S::kStopped, 0}}, rr) == 1);
  // b is full: the next cold target.
  CHECK(ChooseTarget(s, {{S::kStopped, 0}, {S::kReady, 2}, {S::kStopped, 0}}, rr) == 0);
  // The least busy live one with room, even while starting.
  CHECK(ChooseTarget(s, {{S::kReady, 1}, {S::kStarting, 0}, {S::kStopped, 0}}, rr) == 1);
  // All live and full: the least busy ones take turns.
  std::vector<TargetLoad> full = {{S::kReady, 3}, {S::kReady, 2}, {S::kReady, 2}};
  size_t first = ChooseTarget(s, full, rr);
  size_t second = ChooseTarget(s, full, rr);
  CHECK(first != 0);
  CHECK(second != 0);
  CHECK(first != second);
}

}  // namespace
}  // namespace swapd
