// Tests of WakeFd: readable from the first Signal until Clear, one state whatever the count.
#include "base/wake_fd.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

namespace swapd {
namespace {

using namespace std::chrono_literals;

TEST_CASE("WakeFd is readable from a Signal until Clear, however many Signals came",
          "[unit][base]") {
  WakeFd wake;
  REQUIRE(wake.ok());
  CHECK_FALSE(WaitReadable(wake.fd(), 0ms));
  wake.Signal();
  wake.Signal();
  CHECK(WaitReadable(wake.fd(), 0ms));
  wake.Clear();
  CHECK_FALSE(WaitReadable(wake.fd(), 0ms));  // one Clear undoes any number of Signals
  wake.Clear();                               // and a second one does nothing
  CHECK_FALSE(WaitReadable(wake.fd(), 0ms));

  // A Signal from another thread ends a wait.
  std::thread signaller([&] { wake.Signal(); });
  CHECK(WaitReadable(wake.fd(), 60s));
  signaller.join();
}

TEST_CASE("WaitReadable on no fd only times out", "[unit][base]") {
  CHECK_FALSE(WaitReadable(-1, 1ms));
}

}  // namespace
}  // namespace swapd
