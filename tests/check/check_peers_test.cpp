// What `swapd check` shows of peers (their names, key, timeouts) and of a model's timeouts, as
// text and as JSON.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "check/check_command.h"
#include "tests/config/config_test_util.h"

namespace swapd {
namespace {

using Catch::Contains;

TEST_CASE("swapd check shows peers and timeouts", "[unit][check]") {
  auto r = testing::Parse(R"yaml(
models:
  local:
    cmd: "srv --port ${PORT}"
    timeouts: {responseHeader: 60}
peers:
  far:
    proxy: http://10.0.0.2:8080
    apiKey: sekret
    models: [big, shared]
  near:
    proxy: http://10.0.0.3:8080
    models: [shared]
)yaml");
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  const std::string text = DescribeConfig(*r.config);
  CHECK_THAT(text, Contains("peer far: http://10.0.0.2:8080 (its own apiKey)\n"
                            "  far/big (also as \"big\")\n"
                            "  far/shared\n"
                            "  timeouts: connect 30s, keepalive 30s, responseHeader off, "
                            "tlsHandshake 10s, idleConn 90s (default)\n"));
  CHECK_THAT(text, Contains("peer near: http://10.0.0.3:8080 (the client's key goes on)\n"));
  CHECK_THAT(text, Contains("  timeouts: connect 30s, keepalive 30s, responseHeader 60s, "
                            "tlsHandshake 10s, idleConn 3s (default)\n"));
  CHECK(text.find("sekret") == std::string::npos);  // keys are never printed

  const nlohmann::json j = nlohmann::json::parse(DescribeConfigJson(*r.config));
  CHECK(j["peers"]["far"]["names"] == nlohmann::json{"big", "far/big", "far/shared"});
  CHECK(j["peers"]["far"]["apiKey"] == true);
  CHECK(j["peers"]["near"]["timeouts"]["idleConn"].is_null());
  CHECK(j["models"]["local"]["timeouts"]["responseHeader"] == 60);
}

}  // namespace
}  // namespace swapd
