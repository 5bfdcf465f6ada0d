// Pacer: a burst of pokes is one flush; flushes are at least the interval apart; nothing runs
// once it is stopped.
#include "base/pacer.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <vector>

#include "tests/support/wait.h"

namespace swapd {
namespace {

using namespace std::chrono_literals;
using testing::WaitFor;

TEST_CASE("Pacer: a burst is one flush, flushes keep the interval", "[unit][pacer]") {
  std::mutex mu;
  std::vector<Pacer::Clock::time_point> flushes;
  auto count = [&] {
    std::lock_guard lock(mu);
    return flushes.size();
  };
  Pacer pacer(200ms, [&] {
    std::lock_guard lock(mu);
    flushes.push_back(Pacer::Clock::now());
  });
  for (int i = 0; i < 100; ++i) pacer.Poke();
  REQUIRE(WaitFor([&] { return count() >= 1; }, 10s));
  pacer.Poke();
  REQUIRE(WaitFor([&] { return count() >= 2; }, 10s));
  pacer.Stop();
  std::lock_guard lock(mu);
  // The burst went out once (a second flush needed the later poke), and not early.
  CHECK(flushes.size() == 2);
  CHECK(flushes[1] - flushes[0] >= 200ms);
}

TEST_CASE("Pacer: nothing is flushed after Stop", "[unit][pacer]") {
  std::atomic<int> flushed{0};
  Pacer pacer(1ms, [&] { ++flushed; });
  pacer.Poke();
  REQUIRE(WaitFor([&] { return flushed.load() == 1; }, 10s));
  pacer.Stop();
  pacer.Poke();
  pacer.Stop();  // a second Stop is harmless
  CHECK(flushed.load() == 1);
}

}  // namespace
}  // namespace swapd
