// The Router's lease URL follows the port a backend runs on (a ${PORT} moved off a taken port):
// from the start that succeeded on, across a reload that leaves the model unchanged, and back to
// the configured proxy when the model's definition changes. ScriptedBackends; no process.
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>

#include "backends/router.h"
#include "tests/backends/scheduler_fakes.h"
#include "tests/backends/scripted_backend.h"

namespace swapd {
namespace {

using namespace std::chrono_literals;
using testing::BackendScript;
using testing::ConfigBuilder;

std::string LeaseOrigin(Router& router, const std::string& model) {
  auto lease = router.Acquire(model, std::chrono::steady_clock::now() + 20s);
  INFO(lease.status().message());
  REQUIRE(lease.ok());
  return lease.value().proxy_url().origin;
}

TEST_CASE("router: the lease URL follows the port the backend runs on", "[unit][router][ports]") {
  auto script = std::make_shared<BackendScript>();
  script->live_proxy["m"] = "http://127.0.0.1:5801";
  // One group that runs both: a lease of one never stops the other.
  auto builder = [](bool with_new) {
    ConfigBuilder b;
    b.Group("g", /*swap=*/false, /*exclusive=*/true, /*persistent=*/false)
        .Model("m", "g")
        .Model("other", "g");
    if (with_new) b.Model("new");
    return b.Build();
  };
  const Config config = builder(false);
  Router router(std::make_shared<const Config>(config), script->Factory());

  CHECK(LeaseOrigin(router, "m") == "http://127.0.0.1:5801");
  CHECK(LeaseOrigin(router, "other") == "http://127.0.0.1:1");  // told nothing: as configured

  // A reload that leaves it unchanged: it keeps running there.
  const Config added = builder(true);
  router.Reconfigure(std::make_shared<const Config>(added));
  CHECK(LeaseOrigin(router, "m") == "http://127.0.0.1:5801");
  CHECK(script->Starts("m") == 1);

  // A changed definition restarts it; its next start tells where it runs now.
  Config changed = added;
  changed.models["m"].argv = {"srv", "--ctx", "8192"};
  {
    std::lock_guard lock(script->mu);
    script->live_proxy["m"] = "http://127.0.0.1:5802";
  }
  router.Reconfigure(std::make_shared<const Config>(changed));
  CHECK(LeaseOrigin(router, "m") == "http://127.0.0.1:5802");
  CHECK(script->Starts("m") == 2);
}

}  // namespace
}  // namespace swapd
