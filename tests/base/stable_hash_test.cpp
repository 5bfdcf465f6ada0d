// Tests of Fnv1a (its steps, and a value stored hashes depend on) and UnixNow.
#include "base/stable_hash.h"

#include <catch2/catch.hpp>
#include <ctime>

#include "base/unix_time.h"

namespace swapd {
namespace {

TEST_CASE("Fnv1a: FNV-1a's steps from swapd's basis, and separators keep parts apart",
          "[unit][base]") {
  constexpr uint64_t kBasis = 1469598103934665603ull;
  constexpr uint64_t kPrime = 1099511628211ull;
  CHECK(Fnv1a().value() == kBasis);
  CHECK(Fnv1a().Add("a").value() == ((kBasis ^ 'a') * kPrime));
  // What the hashes stored so far were made with (computed apart from this code): unchanged.
  CHECK(Fnv1a().Add("foobar").Hex() == "88fad7c0a8ff07f2");
  CHECK(Fnv1a().Add("foo").Add("bar").value() == Fnv1a().Add("foobar").value());
  CHECK(Fnv1a().Add("ab").AddSeparator().Add("c").value() !=
        Fnv1a().Add("a").AddSeparator().Add("bc").value());
  CHECK(Fnv1a().Add(std::string("a\0b", 3)).value() ==
        Fnv1a().Add("a").AddSeparator().Add("b").value());
}

TEST_CASE("UnixNow is the wall clock in seconds", "[unit][base]") {
  const int64_t before = static_cast<int64_t>(std::time(nullptr));
  const int64_t now = UnixNow();
  const int64_t after = static_cast<int64_t>(std::time(nullptr));
  CHECK(now >= before);
  CHECK(now <= after);
}

}  // namespace
}  // namespace swapd
