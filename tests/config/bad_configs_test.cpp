// A table of broken configs, each with the message and position it must produce, and a config
// with several mistakes that must all be reported.
#include <catch2/catch.hpp>

#include "tests/config/config_test_util.h"

namespace swapd {
namespace {

using testing::At;
using testing::FindDiag;
using testing::Parse;

struct BadConfig {
  const char* what;
  const char* yaml;
  const char* message;  // a fragment of the expected error
  const char* at;       // line:col
};

const BadConfig kBadConfigs[] = {
    {"unknown macro", "models:\n  m:\n    cmd: srv --port ${PORT} ${nope}\n",
     "model \"m\": unknown macro ${nope} in cmd", "3:29"},
    {"unset env", "models:\n  m:\n    cmd: ${env.SWAPD_TEST_UNSET} --port ${PORT}\n",
     "environment variable SWAPD_TEST_UNSET is not set", "3:10"},
    {"proxy port without cmd port", "models:\n  m:\n    cmd: srv\n    proxy: http://h:${PORT}\n",
     "proxy uses ${PORT} but cmd does not", "4:21"},
    {"default proxy without cmd port", "models:\n  m:\n    cmd: srv --port 9000\n",
     "the default proxy (http://localhost:${PORT}) has no port", "2:3"},
    {"PID in cmd", "models:\n  m:\n    cmd: srv ${PID} --port ${PORT}\n",
     "${PID} in cmd: only cmdStop may use ${PID}", "3:14"},
    {"self reference", "macros:\n  a: \"x ${a}\"\nmodels:\n  m:\n    cmd: srv --port ${PORT}\n",
     "macro \"a\": refers to itself", "2:9"},
    {"reserved macro", "macros:\n  MODEL_ID: x\nmodels:\n  m:\n    cmd: srv --port ${PORT}\n",
     "macro \"MODEL_ID\": the name is reserved", "2:3"},
    {"model macro declared late",
     "models:\n  m:\n    macros:\n      a: \"${b}\"\n      b: x\n    cmd: srv ${a} --port "
     "${PORT}\n",
     "is declared after the macro that uses it", "4:11"},
    {"unterminated quote", "models:\n  m:\n    cmd: srv --port ${PORT} 'open\n",
     "model \"m\": cmd: unterminated single quote", "3:10"},
    {"unterminated quote in cmdStop",
     "models:\n  m:\n    cmd: srv --port ${PORT}\n    cmdStop: stop \"x\n",
     "model \"m\": cmdStop: unterminated double quote", "4:14"},
    {"empty cmd", "models:\n  m:\n    cmd: \"  # nothing\"\n", "model \"m\": cmd is required",
     "3:10"},
    {"env without =", "models:\n  m:\n    cmd: srv --port ${PORT}\n    env: [FOO]\n",
     "env: \"FOO\" has no '='", "4:11"},
    {"duplicate alias",
     "models:\n  a:\n    cmd: srv --port ${PORT}\n    aliases: [x]\n  b:\n"
     "    cmd: srv --port ${PORT}\n    aliases: [x]\n",
     "alias \"x\" is already an alias of model \"a\"", "7:15"},
    {"alias is a model id",
     "models:\n  a:\n    cmd: srv --port ${PORT}\n    aliases: [b]\n  b:\n"
     "    cmd: srv --port ${PORT}\n",
     "alias \"b\" is the id of model \"b\"", "4:15"},
    {"member not a model",
     "models:\n  a:\n    cmd: srv --port ${PORT}\ngroups:\n  g: {members: [z]}\n",
     "group \"g\": member \"z\" is not a model", "5:17"},
    {"member twice in a group",
     "models:\n  a:\n    cmd: srv --port ${PORT}\ngroups:\n  g: {members: [a, a]}\n",
     "member \"a\" is listed twice", "5:20"},
    {"member in two groups",
     "models:\n  a:\n    cmd: srv --port ${PORT}\ngroups:\n  g: {members: [a]}\n"
     "  h: {members: [a]}\n",
     "model \"a\" is in two groups: \"g\" and \"h\"", "6:17"},
    {"bool field with a word", "sendLoadingState: sometimes\n",
     "sendLoadingState: expected true or false", "1:19"},
    {"int field with text", "globalTTL: forever\n", "globalTTL: expected an integer", "1:12"},
    {"int field quoted", "startPort: \"5800\"\n", "startPort: expected an integer, got \"5800\"",
     "1:12"},
    {"models not a map", "models: [a, b]\n", "models: expected a map, got a list", "1:9"},
    {"model not a map", "models:\n  m: srv\n", "model \"m\": expected a map of settings", "2:6"},
    {"duplicate model key",
     "models:\n  m:\n    cmd: srv --port ${PORT}\n  m:\n    cmd: srv --port ${PORT}\n",
     "duplicate key \"m\" (first defined at line 2)", "4:3"},
    {"bad log level", "logLevel: loud\n", "logLevel: must be one of", "1:11"},
    {"unknown preload", "hooks:\n  on_startup:\n    preload: [ghost]\n",
     "preload: \"ghost\" is not a model or alias", "3:15"},
    {"groups with routing", "groups:\n  g: {members: []}\nrouting:\n  router:\n    use: group\n",
     "routing.router cannot be used together", "4:3"},
    {"unknown router", "routing:\n  router:\n    use: fancy\n",
     "routing.router.use: must be group or matrix", "3:10"},
    {"ttl below -1", "models:\n  m:\n    cmd: srv --port ${PORT}\n    ttl: -3\n", "ttl: must be -1",
     "4:10"},
    {"not a map at all", "- a\n- b\n", "the config must be a map", "1:1"},
    {"bad merge key", "models:\n  m:\n    <<: 5\n    cmd: srv --port ${PORT}\n",
     "merge key (<<) must be a map", "3:9"},
    {"http proxy", "models:\n  m:\n    cmd: srv\n    proxy: localhost:8000\n",
     "proxy: must be an http:// or https:// URL", "4:12"},
    {"port overflow",
     "startPort: 65535\nmodels:\n  a:\n    cmd: srv ${PORT}\n  b:\n    cmd: srv ${PORT}\n",
     "${PORT} would be 65536", "6:14"},
};

TEST_CASE("Bad configs fail with their message and position", "[unit][config]") {
  for (const auto& bad : kBadConfigs) {
    SECTION(bad.what) {
      auto r = Parse(bad.yaml);
      INFO(bad.yaml);
      INFO(r.ErrorText());
      CHECK_FALSE(r.ok());
      const Diagnostic* d = FindDiag(r, bad.message);
      REQUIRE(d != nullptr);
      CHECK(d->severity == Diagnostic::Severity::kError);
      CHECK(d->pos.file == "config.yaml");
      CHECK(At(d) == bad.at);
    }
  }
}

TEST_CASE("Every error of a config is reported, in file order", "[unit][config]") {
  auto r = Parse(R"(macros:
  root: ${env.SWAPD_MISSING}
models:
  qwen3-4b-duo:
    cmd: llama-server --port ${PROT}
    aliases: [duo]
  ornith-35b-duo:
    cmd: llama-server --port ${PORT} -m ${root}/x.gguf
    aliases: [duo]
groups:
  duo:
    swap: false
    members: [qwen3-4b-duo, ornith-35b-duo]
  solo:
    members: [qwen3-4b-duo]
)");
  REQUIRE_FALSE(r.ok());
  std::vector<std::string> errors;
  for (const auto& d : r.diagnostics) {
    if (d.severity == Diagnostic::Severity::kError) errors.push_back(d.ToString());
  }
  INFO(r.ErrorText());
  CHECK(errors == std::vector<std::string>{
                      "config.yaml:2:9: error: environment variable SWAPD_MISSING is not set "
                      "(used as ${env.SWAPD_MISSING})",
                      "config.yaml:4:3: error: model \"qwen3-4b-duo\": cmd does not use "
                      "${PORT}, so the default proxy (http://localhost:${PORT}) has no port: set "
                      "proxy, or use ${PORT} in cmd",
                      "config.yaml:5:30: error: model \"qwen3-4b-duo\": unknown macro ${PROT} in "
                      "cmd",
                      "config.yaml:9:15: error: model \"ornith-35b-duo\": alias \"duo\" is already "
                      "an alias of model \"qwen3-4b-duo\"",
                      "config.yaml:15:15: error: model \"qwen3-4b-duo\" is in two groups: \"duo\" "
                      "and \"solo\"",
                  });
}

TEST_CASE("A YAML syntax error is reported with yaml-cpp's position", "[unit][config]") {
  auto r = Parse("models:\n  m:\n    cmd: srv --port ${PORT}\n   ttl: 5\n");
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].ToString() ==
        "config.yaml:4:4: error: YAML syntax error: end of map not found");

  auto tab = Parse("models:\n\tm:\n");
  REQUIRE_FALSE(tab.ok());
  CHECK(tab.diagnostics.at(0).message.find("YAML syntax error") == 0);
  CHECK(tab.diagnostics.at(0).pos.line == 2);
}

}  // namespace
}  // namespace swapd
