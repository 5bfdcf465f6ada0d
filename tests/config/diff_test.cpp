#include "config/diff.h"

#include "tests/config/config_test_util.h"

namespace swapd {
namespace {

using testing::Parse;

Config Load(std::string_view yaml) {
  LoadResult r = Parse(yaml);
  REQUIRE(r.ok());
  return *r.config;
}

TEST_CASE("DiffConfigs sorts models into added, removed, changed and unchanged",
          "[unit][config][reload]") {
  Config before = Load(R"(
models:
  same: {cmd: "srv --port 5001", proxy: "http://127.0.0.1:5001"}
  argv: {cmd: "srv --port 5002", proxy: "http://127.0.0.1:5002"}
  gone: {cmd: "srv --port 5003", proxy: "http://127.0.0.1:5003"}
  settings: {cmd: "srv --port 5004", proxy: "http://127.0.0.1:5004", ttl: 10}
  env: {cmd: "srv --port 5005", proxy: "http://127.0.0.1:5005", env: ["A=1"]}
)");
  Config after = Load(R"(
models:
  same: {cmd: "srv --port 5001", proxy: "http://127.0.0.1:5001"}
  argv: {cmd: "srv --port 5002 -c 4096", proxy: "http://127.0.0.1:5002"}
  new: {cmd: "srv --port 5006", proxy: "http://127.0.0.1:5006"}
  settings: {cmd: "srv --port 5004", proxy: "http://127.0.0.1:5004", ttl: 60, aliases: [s]}
  env: {cmd: "srv --port 5005", proxy: "http://127.0.0.1:5005", env: ["A=2"]}
)");
  ConfigDiff diff = DiffConfigs(before, after);
  CHECK(diff.added == std::set<std::string>{"new"});
  CHECK(diff.removed == std::set<std::string>{"gone"});
  CHECK(diff.changed == std::set<std::string>{"argv", "env"});
  CHECK(diff.unchanged == std::set<std::string>{"same", "settings"});
  CHECK_FALSE(diff.empty());
  CHECK(DiffConfigs(after, after).empty());
}

TEST_CASE("A model that moves to another group, or changes its stop command, restarts",
          "[unit][config][reload]") {
  Config before = Load(R"(
models:
  a: {cmd: "srv --port 5001", proxy: "http://127.0.0.1:5001"}
  b: {cmd: "srv --port 5002", proxy: "http://127.0.0.1:5002"}
)");
  Config after = Load(R"(
models:
  a: {cmd: "srv --port 5001", proxy: "http://127.0.0.1:5001"}
  b: {cmd: "srv --port 5002", proxy: "http://127.0.0.1:5002", cmdStop: "kill ${PID}"}
groups:
  duo: {swap: false, members: [a]}
)");
  ConfigDiff diff = DiffConfigs(before, after);
  CHECK(diff.changed == std::set<std::string>{"a", "b"});
  CHECK(diff.unchanged.empty());
}

}  // namespace
}  // namespace swapd
