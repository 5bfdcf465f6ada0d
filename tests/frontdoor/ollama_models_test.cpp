#include "frontdoor/ollama_models.h"

#include <catch2/catch.hpp>

namespace swapd {
namespace {

using namespace std::chrono_literals;

ModelSnapshot Resident(const std::string& id, BackendState state) {
  ModelSnapshot snapshot;
  snapshot.id = id;
  snapshot.backend.state = state;
  return snapshot;
}

TEST_CASE("/api/ps: expires_at follows the ttl in force and the idle clock", "[unit][ollama]") {
  Config config;
  config.models["idle"].ttl = 600s;
  config.models["busy"].ttl = 600s;
  config.models["kept"];
  config.models["off"];
  const auto steady_now = std::chrono::steady_clock::now();

  // Idle for a while under keep_alive's 1h: it idles out at its deadline, not at now + ttl.
  ModelSnapshot idle = Resident("idle", BackendState::kReady);
  idle.ttl = 3600s;
  idle.idle_deadline = steady_now + 1800s;
  // Busy: its clock has not started, so now + the ttl in force.
  ModelSnapshot busy = Resident("busy", BackendState::kReady);
  busy.ttl = 600s;
  // No ttl (none configured, or a negative keep_alive): never.
  ModelSnapshot kept = Resident("kept", BackendState::kStarting);
  ModelSnapshot off = Resident("off", BackendState::kStopped);

  const nlohmann::json ps = OllamaPs({idle, busy, kept, off}, config, 0, steady_now);
  REQUIRE(ps["models"].size() == 3);  // a stopped model is not running
  CHECK(ps["models"][0]["name"] == "idle");
  CHECK(ps["models"][0]["expires_at"] == "1970-01-01T00:30:00Z");
  CHECK(ps["models"][1]["name"] == "busy");
  CHECK(ps["models"][1]["expires_at"] == "1970-01-01T00:10:00Z");
  CHECK(ps["models"][2]["name"] == "kept");
  CHECK(ps["models"][2]["expires_at"].get<std::string>().starts_with("2318-"));
}

}  // namespace
}  // namespace swapd
