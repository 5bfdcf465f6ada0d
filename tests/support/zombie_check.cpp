// A Catch2 listener that checks, after every test case, that the test process has no zombie
// children: every process a test (or swapd code under test) started must have been reaped. A
// zombie that outlives a short grace period fails the whole run.
#include <unistd.h>

#define CATCH_CONFIG_EXTERNAL_INTERFACES  // the listener interface
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/proc_file.h"

namespace {

using swapd::testing::ZombieChildren;

struct ZombieCheck : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;

  void testCaseEnded(Catch::TestCaseStats const& stats) override {
    // A child reaped by a background thread may be a zombie for a moment: allow for that.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    std::vector<int> zombies = ZombieChildren();
    while (!zombies.empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      zombies = ZombieChildren();
    }
    for (int pid : zombies) {
      std::fprintf(stderr, "zombie check: test case \"%s\" left zombie child %d\n",
                   stats.testInfo.name.c_str(), pid);
      failed_ = true;
    }
  }

  void testRunEnded(Catch::TestRunStats const&) override {
    if (failed_) {
      std::fprintf(stderr, "zombie check: FAILED (see above)\n");
      std::fflush(stderr);
      std::_Exit(1);
    }
  }

  bool failed_ = false;
};

}  // namespace

CATCH_REGISTER_LISTENER(ZombieCheck)
