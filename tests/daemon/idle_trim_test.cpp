// Tests of IdleTrim: memory is given back once after requests stop, never while they go on or
// while the server stays idle.
#include "daemon/idle_trim.h"

#include <atomic>
#include <catch2/catch.hpp>

#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;

TEST_CASE("IdleTrim trims once after a burst stops, never while busy or idle", "[unit][memory]") {
  std::atomic<uint64_t> requests{0};
  std::atomic<int> looks{0};
  std::atomic<int> trims{0};
  std::atomic<bool> busy{false};
  IdleTrim trim(
      [&] {
        ++looks;
        return busy ? ++requests : requests.load();
      },
      10ms, [&](uint64_t, uint64_t) { ++trims; });
  auto looked = [&](int more) {
    const int from = looks;
    return WaitFor([&] { return looks >= from + more; });
  };
  REQUIRE(looked(5));
  CHECK(trims == 0);  // idle from the start

  busy = true;  // requests at every look
  REQUIRE(looked(10));
  CHECK(trims == 0);

  busy = false;
  REQUIRE(WaitFor([&] { return trims == 1; }));
  REQUIRE(looked(5));
  CHECK(trims == 1);  // once per quiet spell

  requests += 3;  // another burst
  REQUIRE(WaitFor([&] { return trims == 2; }));
  CHECK(ResidentBytes() > 0);
}

}  // namespace
}  // namespace swapd::testing
