// ModelForPort: a model's port-bearing fields expanded again for another port than the one its
// ${PORT} got at load; a model whose port is written as a number keeps it.
#include "config/model_port.h"

#include "tests/config/config_test_util.h"

namespace swapd {
namespace {

using testing::Parse;

Config LoadPortConfig(std::string_view yaml) {
  LoadResult r = Parse(yaml);
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  return *r.config;
}

TEST_CASE("ModelForPort expands ${PORT} again in argv, cmdStop, env, proxy and checkEndpoint",
          "[unit][config][ports]") {
  Config config = LoadPortConfig(R"(
startPort: 6100
models:
  m:
    cmd: |
      # a comment line: --port ${PORT}
      srv --port ${PORT} --host 127.0.0.1 "--name=x ${PORT}" \
          --alias '${MODEL_ID}:${PORT}'
    cmdStop: curl -X POST http://127.0.0.1:${PORT}/shutdown?pid=${PID}
    proxy: http://127.0.0.1:${PORT}/v1/
    checkEndpoint: /health?port=${PORT}
    env: ["PORT_ENV=${PORT}", "OTHER=1"]
    metadata: {port: "${PORT}"}
)");
  const ModelConfig& configured = config.models.at("m");
  REQUIRE(PortIsChosen(configured));
  CHECK(configured.port == 6100);

  const ModelConfig moved = ModelForPort(configured, 6123);
  CHECK(moved.port == 6123);
  CHECK(moved.argv == std::vector<std::string>{"srv", "--port", "6123", "--host", "127.0.0.1",
                                               "--name=x 6123", "--alias", "m:6123"});
  CHECK(moved.stop_argv == std::vector<std::string>{"curl", "-X", "POST",
                                                    "http://127.0.0.1:6123/shutdown?pid=${PID}"});
  CHECK(moved.env ==
        std::vector<std::pair<std::string, std::string>>{{"PORT_ENV", "6123"}, {"OTHER", "1"}});
  CHECK(moved.proxy == "http://127.0.0.1:6123/v1");
  CHECK(moved.check_endpoint == "/health?port=6123");
  // What is not where the process listens keeps the configured port.
  CHECK(moved.metadata == configured.metadata);
  CHECK(moved.id == configured.id);
  CHECK(moved.port_template == configured.port_template);

  // Back on its own port: exactly what the loader made.
  const ModelConfig again = ModelForPort(moved, 6100);
  CHECK(again.argv == configured.argv);
  CHECK(again.stop_argv == configured.stop_argv);
  CHECK(again.env == configured.env);
  CHECK(again.proxy == configured.proxy);
  CHECK(again.check_endpoint == configured.check_endpoint);
}

TEST_CASE("ModelForPort keeps the default proxy, checkEndpoint none and a model without cmdStop",
          "[unit][config][ports]") {
  Config config = LoadPortConfig(R"(
models:
  m:
    cmd: srv --port ${PORT}
    checkEndpoint: none
)");
  const ModelConfig moved = ModelForPort(config.models.at("m"), 5900);
  CHECK(moved.argv == std::vector<std::string>{"srv", "--port", "5900"});
  CHECK(moved.stop_argv.empty());
  CHECK(moved.proxy == "http://localhost:5900");
  CHECK(moved.check_endpoint.empty());
}

TEST_CASE("A port written as a number is left as written", "[unit][config][ports]") {
  Config config = LoadPortConfig(R"(
models:
  fixed: {cmd: "srv --port 5001", proxy: "http://127.0.0.1:5001"}
)");
  const ModelConfig& fixed = config.models.at("fixed");
  CHECK_FALSE(PortIsChosen(fixed));
  const ModelConfig same = ModelForPort(fixed, 5999);
  CHECK(same.port == 0);
  CHECK(same.argv == fixed.argv);
  CHECK(same.proxy == "http://127.0.0.1:5001");
}

}  // namespace
}  // namespace swapd
