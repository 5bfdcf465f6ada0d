// What every fault-injection test checks once its fault has happened: swapd is still healthy.
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "tests/support/http_wait.h"
#include "tests/support/swapd_process.h"

namespace swapd::testing {

// swapd answers /health (within a generous 5 s: not stuck behind the fault) and serves `model`
// (which may need a swap) normally.
inline void ExpectHealthy(const std::string& url, const std::string& model) {
  using namespace std::chrono_literals;
  const auto start = std::chrono::steady_clock::now();
  HttpReply health = HttpGet(url, "/health", 10s);
  CHECK(health.status == 200);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  HttpReply r =
      HttpPost(url, "/v1/chat/completions", ChatBody(model, false), "application/json", 60s);
  INFO("healthy model " << model << ": " << r.Describe());
  CHECK(r.status == 200);
}

}  // namespace swapd::testing
