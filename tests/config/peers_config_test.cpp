// `peers` (proxy, apiKey, models, filters, timeouts; the names requests may use) and `timeouts`
// of models, read with llama-swap's keys, each problem at its place.
#include <catch2/catch.hpp>

#include "tests/config/config_test_util.h"

namespace swapd {
namespace {

using namespace std::chrono_literals;
using testing::At;
using testing::CountSeverity;
using testing::FindDiag;
using testing::Parse;

TEST_CASE("peers are read with their names, keys, filters and timeouts", "[unit][config]") {
  auto r = Parse(R"yaml(
models:
  local:
    cmd: "srv --port ${PORT}"
    timeouts: {connect: 5, responseHeader: 60, idleConn: 0}
peers:
  openrouter:
    proxy: https://openrouter.ai/api/
    apiKey: ${env.OR_KEY}
    models: [deepseek/deepseek-v3.2, shared, only-here]
    filters:
      stripParams: "top_k, model"
      setParams: {temperature: 0.5, model: nope}
    timeouts: {connect: 3, tlsHandshake: 4}
  lan:
    proxy: http://192.168.1.20:8080
    models: [shared, local]
)yaml",
                 {{"OR_KEY", "sk-or-123"}});
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  CHECK(CountSeverity(r, Diagnostic::Severity::kWarning) == 1);  // setParams.model
  const PeerConfig& p = r.config->peers.at("openrouter");
  CHECK(p.proxy == "https://openrouter.ai/api");
  CHECK(p.api_key == "sk-or-123");
  CHECK(p.models.size() == 3);
  CHECK(p.strip_params == std::vector<std::string>{"top_k"});
  CHECK(p.set_params == nlohmann::json{{"temperature", 0.5}});
  CHECK(p.timeouts.connect == 3s);
  CHECK(p.timeouts.tls_handshake == 4s);
  CHECK(p.timeouts.keepalive == 30s);  // llama-swap's default
  CHECK_FALSE(p.timeouts.idle_conn.has_value());
  CHECK(r.config->peers.at("lan").api_key.empty());

  // Every "<peer>/<model>"; a bare name only when one peer alone lists it and no local id has it.
  const PeerModelRef* ref = r.config->FindPeerModel("openrouter/deepseek/deepseek-v3.2");
  REQUIRE(ref != nullptr);
  CHECK(ref->peer == "openrouter");
  CHECK(ref->model == "deepseek/deepseek-v3.2");
  CHECK(r.config->FindPeerModel("deepseek/deepseek-v3.2") != nullptr);
  CHECK(r.config->FindPeerModel("only-here")->peer == "openrouter");
  CHECK(r.config->FindPeerModel("shared") == nullptr);  // two peers list it
  CHECK(r.config->FindPeerModel("lan/shared")->peer == "lan");
  CHECK(r.config->FindPeerModel("local") == nullptr);  // a local model's id
  CHECK(r.config->FindPeerModel("lan/local")->model == "local");

  const TimeoutsConfig& t = r.config->models.at("local").timeouts;
  CHECK(t.connect == 5s);
  CHECK(t.response_header == 60s);
  CHECK(t.idle_conn == 0s);
}

TEST_CASE("bad peers and timeouts are errors at their place", "[unit][config]") {
  auto bad = Parse(R"yaml(
models:
  a:
    cmd: "srv --port ${PORT}"
    aliases: [p/m]
    timeouts: {connect: -1, idleConn: soon}
peers:
  p:
    proxy: ftp://example.org
    models: [m]
  q:
    proxy: http://example.org
    models: []
  r:
    models: [x]
  s:
    proxy: http://example.org
    models: [b/c]
  s/b:
    proxy: http://example.org
    models: [c]
    timeouts: {connect: 1.5}
)yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(At(FindDiag(bad, "model \"a\": timeouts.connect: expected whole seconds >= 0")) == "6:25");
  CHECK(At(FindDiag(bad, "timeouts.idleConn: expected whole seconds")) == "6:39");
  CHECK(At(FindDiag(bad, "peers.p.proxy: expected the peer's base URL")) == "9:12");
  CHECK(At(FindDiag(bad, "peers.q.models: expected a list")) == "13:13");
  CHECK(At(FindDiag(bad, "peers.r.proxy: expected")) == "15:5");
  CHECK(FindDiag(bad, "\"s/b/c\" also names model") != nullptr);
  CHECK(At(FindDiag(bad, "peers.s/b.timeouts.connect: expected whole seconds")) == "22:25");

  // A local id or alias that is also a peer's full name: ambiguous.
  auto clash = Parse(R"yaml(
models:
  a:
    cmd: "srv --port ${PORT}"
    aliases: [p/m]
peers:
  p:
    proxy: http://example.org
    models: [m]
)yaml");
  REQUIRE_FALSE(clash.ok());
  CHECK(At(FindDiag(clash, "peers.p: \"p/m\" is also a local model id or alias")) == "7:3");
}

TEST_CASE("peers and timeouts are no longer 'not supported'", "[unit][config]") {
  auto r = Parse(R"yaml(
models:
  a:
    cmd: "srv --port ${PORT}"
    timeouts: {connect: 1, keepalive: 0, expectContinue: 1, tlsHandshake: 2, idleConn: 9}
peers:
  p:
    proxy: http://example.org
    models: [m]
    filters: {setParamsByID: {m: {x: 1}}}
    timeouts: {idleConn: 1, bogus: 2}
profiles:
  remote:
    pins: {smart: p/m}
)yaml");
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  CHECK(FindDiag(r, "not supported") == nullptr);
  // Peers have no setParamsByID (as llama-swap), and unknown keys are named.
  CHECK(FindDiag(r, "setParamsByID") != nullptr);
  CHECK(FindDiag(r, "bogus") != nullptr);
  CHECK(r.config->profiles.at("remote").pins.at("smart") == "p/m");
}

TEST_CASE("selectors may target peers' models, except warm ones", "[unit][config]") {
  auto r = Parse(R"yaml(
models:
  a:
    cmd: "srv --port ${PORT}"
peers:
  p:
    proxy: http://example.org
    models: [m]
selectors:
  plan: {strategy: pin, targets: [p/m, a]}
  spill: {strategy: spillover, targets: [a, p/m]}
  hot: {strategy: warm, targets: [a, p/m]}
)yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(At(FindDiag(r,
                    "selectors.hot.targets: \"p/m\" is a peer's model; warm targets must be "
                    "local")) == "12:38");
  CHECK(FindDiag(r, "selectors.plan") == nullptr);
  CHECK(FindDiag(r, "selectors.spill") == nullptr);

  auto named = Parse(R"yaml(
models:
  a:
    cmd: "srv --port ${PORT}"
peers:
  p:
    proxy: http://example.org
    models: [m]
selectors:
  p/m: {strategy: pin, targets: [a]}
)yaml");
  CHECK(At(FindDiag(named, "selectors.p/m: the id is already a model id, alias or peer model")) ==
        "10:3");
}

}  // namespace
}  // namespace swapd
