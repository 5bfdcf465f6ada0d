// Tests of the real readiness probe (MakeHttpReadinessProbe) against the fake llama-server and a
// loopback socket: what it reports for each answer, and that one check stays within its bound.
#include "backends/readiness_probe.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>

#include "backends/port_check.h"
#include "http/listen_socket.h"
#include "tests/support/fake_backend_process.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;

FakeBackend Start(const std::vector<std::string>& args) {
  Result<FakeBackend> started = StartFakeBackend(args);
  INFO(started.status().ToString());
  REQUIRE(started.ok());
  return std::move(started).value();
}

TEST_CASE("the readiness probe: only 200 is ready, and the detail says what was seen",
          "[integration][backend][readiness]") {
  SECTION("a backend still loading answers 503") {
    FakeBackend fake = Start({"-m", "m", "--never-ready"});
    auto probe = MakeHttpReadinessProbe(fake.base_url, "/health");
    const ProbeResult result = probe->Check();
    CHECK_FALSE(result.ready);
    CHECK(result.detail == "HTTP 503");
    CHECK(probe->Target() == fake.base_url + "/health");
  }

  SECTION("a ready backend, its checkEndpoint under the proxy's path prefix") {
    FakeBackend fake = Start({"-m", "m"});
    auto probe = MakeHttpReadinessProbe(fake.base_url + "/v1/", "models");
    const ProbeResult result = probe->Check();
    CHECK(result.ready);
    CHECK(result.detail == "HTTP 200");
    CHECK(probe->Target() == fake.base_url + "/v1/models");
  }

  SECTION("nothing listens yet") {
    const int port = FreeLoopbackPort();
    REQUIRE(port > 0);
    const std::string where = "127.0.0.1:" + std::to_string(port);
    const ProbeResult result = MakeHttpReadinessProbe("http://" + where, "/health")->Check();
    CHECK_FALSE(result.ready);
    CHECK(result.detail == "Connection refused (" + where + ")");
  }
}

TEST_CASE("a readiness check of a backend that accepts and says nothing ends in about a second",
          "[unit][backend][readiness]") {
  // Listening but never accepting: the kernel completes the connect, no answer ever comes.
  Result<ListenSocket> silent = Listen("127.0.0.1", 0);
  REQUIRE(silent.ok());
  auto probe =
      MakeHttpReadinessProbe("http://127.0.0.1:" + std::to_string(silent.value().port), "/health");
  const auto began = std::chrono::steady_clock::now();
  const ProbeResult result = probe->Check();
  const auto took = std::chrono::steady_clock::now() - began;
  close(silent.value().fd);
  CHECK_FALSE(result.ready);
  CHECK(result.detail == "read timed out");
  CHECK(took >= 900ms);
  CHECK(took < 5s);
}

}  // namespace
}  // namespace swapd::testing
