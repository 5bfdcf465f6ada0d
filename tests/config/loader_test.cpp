// The schema: defaults, every top-level and per-model field, keys swapd does not know.
#include <catch2/catch.hpp>

#include "tests/config/config_test_util.h"

namespace swapd {
namespace {

using std::chrono::seconds;
using testing::At;
using testing::FindDiag;
using testing::Model;
using testing::Parse;
using Severity = Diagnostic::Severity;
using Words = std::vector<std::string>;

TEST_CASE("A minimal config gets llama-swap's defaults", "[unit][config]") {
  auto r = Parse("models:\n  m:\n    cmd: srv --port ${PORT}\n");
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  CHECK(r.diagnostics.empty());
  const Config& c = *r.config;
  CHECK(c.health_check_timeout == seconds(120));
  CHECK(c.log_level == "info");
  CHECK(c.log_to_stdout == "proxy");
  CHECK(c.start_port == 5800);
  CHECK(c.global_ttl == seconds(0));
  CHECK(c.unload_timeout == seconds(10));
  CHECK(c.api_keys.empty());
  CHECK_FALSE(c.send_loading_state);
  CHECK_FALSE(c.include_aliases_in_list);
  CHECK(c.capture_buffer_mb == 5);
  const ModelConfig& m = Model(r, "m");
  CHECK(m.id == "m");
  CHECK(m.pos.ToString() == "config.yaml:2:3");
  CHECK(m.argv == Words{"srv", "--port", "5800"});
  CHECK(m.stop_argv.empty());
  CHECK(m.proxy == "http://localhost:5800");
  CHECK(m.port == 5800);
  CHECK(m.check_endpoint == "/health");
  CHECK(m.ttl == seconds(0));
  CHECK(m.unload_timeout == seconds(10));
  CHECK(m.concurrency_limit == 10);
  CHECK_FALSE(m.unlisted);
  CHECK(m.group == kDefaultGroup);
  CHECK(m.set_params == nlohmann::json::object());
  CHECK(m.metadata == nlohmann::json::object());
}

TEST_CASE("Every top-level setting is read", "[unit][config]") {
  auto r = Parse(R"(
healthCheckTimeout: 300
logLevel: debug
logToStdout: both
startPort: 10001
globalTTL: 600
unloadTimeout: 30
sendLoadingState: true
includeAliasesInList: true
apiKeys:
  - sk-one
  - "${env.KEY}"
  - "${prefix}-three"
macros:
  prefix: sk
models:
  m:
    cmd: srv --port ${PORT}
    aliases: [mm]
hooks:
  on_startup:
    preload:
      - mm
      - "  m  "
)",
                 {{"KEY", "sk-two"}});
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  const Config& c = *r.config;
  CHECK(c.health_check_timeout == seconds(300));
  CHECK(c.log_level == "debug");
  CHECK(c.log_to_stdout == "both");
  CHECK(c.start_port == 10001);
  CHECK(c.global_ttl == seconds(600));
  CHECK(c.unload_timeout == seconds(30));
  CHECK(c.send_loading_state);
  CHECK(c.include_aliases_in_list);
  CHECK(c.api_keys == Words{"sk-one", "sk-two", "sk-three"});
  CHECK(c.preload == Words{"m"});
  CHECK(Model(r, "m").ttl == seconds(600));
  CHECK(Model(r, "m").unload_timeout == seconds(30));
  CHECK(Model(r, "m").port == 10001);
}

TEST_CASE("Every per-model field is read", "[unit][config]") {
  auto r = Parse(R"(
globalTTL: 100
models:
  full:
    name: Full Model
    description: "All the fields"
    cmd: srv --port ${PORT}
    cmdStop: docker stop x
    proxy: http://127.0.0.1:${PORT}/
    aliases:
      - f
      - id: full-alias
    env:
      - "CUDA_VISIBLE_DEVICES="
      - LD_LIBRARY_PATH=/opt/lib
      - "OPTS=a=b"
    checkEndpoint: none
    ttl: 0
    unloadTimeout: 3
    unlisted: true
    useModelName: org/full
    concurrencyLimit: 2
    filters:
      stripParams: " top_k, model ,temperature,, top_k "
      setParams:
        temperature: 0.2
        model: forced
    metadata:
      family: qwen
      tags: [a, b]
  legacy:
    cmd: srv
    proxy: http://127.0.0.1:9
    ttl: -1
    filters:
      strip_params: "seed"
)");
  INFO(r.ErrorText());
  const ModelConfig& m = Model(r, "full");
  CHECK(m.name == "Full Model");
  CHECK(m.description == "All the fields");
  CHECK(m.stop_argv == Words{"docker", "stop", "x"});
  CHECK(m.proxy == "http://127.0.0.1:5800");
  CHECK(m.aliases == Words{"f", "full-alias"});
  using Env = std::vector<std::pair<std::string, std::string>>;
  CHECK(m.env ==
        Env{{"CUDA_VISIBLE_DEVICES", ""}, {"LD_LIBRARY_PATH", "/opt/lib"}, {"OPTS", "a=b"}});
  CHECK(m.check_endpoint.empty());
  CHECK(m.ttl == seconds(0));
  CHECK(m.unload_timeout == seconds(3));
  CHECK(m.unlisted);
  CHECK(m.use_model_name == "org/full");
  CHECK(m.concurrency_limit == 2);
  CHECK(m.strip_params == Words{"temperature", "top_k"});
  CHECK(m.set_params == nlohmann::json{{"temperature", 0.2}});
  CHECK(m.metadata == nlohmann::json{{"family", "qwen"}, {"tags", {"a", "b"}}});
  CHECK(At(FindDiag(r, "setParams: model is never overridden")) == "27:9");
  const ModelConfig& legacy = Model(r, "legacy");
  CHECK(legacy.ttl == seconds(100));
  CHECK(legacy.strip_params == Words{"seed"});
  CHECK(r.config->FindModel("full-alias") == &m);
  CHECK(r.config->FindModel("f") == &m);
  CHECK(r.config->FindModel("nope") == nullptr);
}

TEST_CASE("Unknown keys warn with their position and a suggestion", "[unit][config]") {
  const char* yaml = R"(
healthcheckTimeout: 100
maxRunningModels: 2
models:
  m:
    cmd: srv --port ${PORT}
    cmdstop: stop
    filters:
      stripParam: x
groups:
  g:
    member: [m]
)";
  auto r = Parse(yaml);
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  const Diagnostic* d = FindDiag(r, "unknown key healthcheckTimeout");
  REQUIRE(d);
  CHECK(d->severity == Severity::kWarning);
  CHECK(d->ToString() ==
        "config.yaml:2:1: warning: unknown key healthcheckTimeout (did you mean "
        "healthCheckTimeout?); ignored");
  CHECK(FindDiag(r, "unknown key maxRunningModels; ignored"));
  CHECK(At(FindDiag(r, "model \"m\": unknown key cmdstop (did you mean cmdStop?)")) == "7:5");
  CHECK(At(FindDiag(r, "unknown key filters.stripParam (did you mean stripParams?)")) == "9:7");
  CHECK(At(FindDiag(r, "group \"g\": unknown key member (did you mean members?)")) == "12:5");

  auto strict = Parse(yaml, {}, true);
  REQUIRE_FALSE(strict.ok());
  CHECK(testing::CountSeverity(strict, Severity::kError) == 5);
  CHECK(FindDiag(strict, "unknown key cmdstop")->severity == Severity::kError);
}

TEST_CASE("Keys llama-swap knows but swapd ignores warn once each", "[unit][config]") {
  auto r = Parse(R"(
logRequests: true
metricsMaxInMemory: 10
peers: {}
models:
  a:
    cmd: srv --port ${PORT}
    sendLoadingState: true
    filters:
      setParamsByMatch: {}
  b:
    cmd: srv --port ${PORT}
    sendLoadingState: false
    filters:
      setParamsByMatch: {}
)",
                 {}, true);
  INFO(r.ErrorText());
  REQUIRE(r.ok());  // never errors, even under --strict
  CHECK(At(FindDiag(r, "logRequests: not supported yet, ignored")) == "2:1");
  const Diagnostic* by_match = FindDiag(r, "setParamsByMatch: not supported yet");
  REQUIRE(by_match);
  CHECK(by_match->message ==
        "model \"a\": filters.setParamsByMatch: not supported yet, ignored (and in 1 more place)");
  CHECK(testing::CountSeverity(r, Severity::kWarning) == 3);
  // A model's sendLoadingState is read (it overrides the top-level one).
  CHECK(Model(r, "a").send_loading_state == true);
  CHECK(Model(r, "b").send_loading_state == false);
}

TEST_CASE("captureBuffer is MB of captures; 0 turns them off; negative is an error",
          "[unit][config]") {
  const std::string models = "models:\n  m:\n    cmd: srv --port ${PORT}\n";
  auto ten = Parse("captureBuffer: 10\n" + models, {}, true);
  INFO(ten.ErrorText());
  REQUIRE(ten.ok());
  CHECK(ten.diagnostics.empty());  // no longer "not supported yet"
  CHECK(ten.config->capture_buffer_mb == 10);
  auto off = Parse("captureBuffer: 0\n" + models);
  REQUIRE(off.ok());
  CHECK(off.config->capture_buffer_mb == 0);
  auto negative = Parse("captureBuffer: -1\n" + models);
  REQUIRE_FALSE(negative.ok());
  const Diagnostic* error = FindDiag(negative, "captureBuffer: must be >= 0");
  REQUIRE(error);
  CHECK(error->pos.ToString() == "config.yaml:1:16");
  auto text = Parse("captureBuffer: lots\n" + models);
  REQUIRE_FALSE(text.ok());
  CHECK(FindDiag(text, "captureBuffer")->pos.ToString() == "config.yaml:1:16");
}

TEST_CASE("Booleans follow Go's yaml.v3", "[unit][config]") {
  auto r = Parse("models:\n  m:\n    cmd: srv --port ${PORT}\n    unlisted: yes\n");
  INFO(r.ErrorText());
  CHECK(Model(r, "m").unlisted);
  const Diagnostic* hint = FindDiag(r, "unlisted: \"yes\" is read as true");
  REQUIRE(hint);
  CHECK(hint->severity == Severity::kHint);
  CHECK(At(hint) == "4:15");

  auto bad = Parse("models:\n  m:\n    cmd: srv --port ${PORT}\n    unlisted: maybe\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(FindDiag(bad, "unlisted: expected true or false, got \"maybe\"")->pos.ToString() ==
        "config.yaml:4:15");
}

TEST_CASE("Values out of range and wrong types are errors", "[unit][config]") {
  auto r = Parse(R"(
startPort: 0
globalTTL: -5
logLevel: verbose
logToStdout: "proxy,upstream"
healthCheckTimeout: soon
models:
  m:
    cmd: srv --port ${PORT}
    ttl: -2
    concurrencyLimit: -1
    unloadTimeout: 1.5
    env: "A=1"
    aliases: x
)");
  REQUIRE_FALSE(r.ok());
  CHECK(At(FindDiag(r, "startPort: must be between 1 and 65535")) == "2:12");
  CHECK(At(FindDiag(r, "globalTTL: must be >= 0")) == "3:12");
  CHECK(At(FindDiag(r, "logLevel: must be one of debug, info, warn, error")) == "4:11");
  CHECK(At(FindDiag(r, "logToStdout: must be one of proxy, upstream, both, none")) == "5:14");
  CHECK(At(FindDiag(r, "healthCheckTimeout: expected an integer, got \"soon\"")) == "6:21");
  CHECK(At(FindDiag(r, "ttl: must be -1 (globalTTL), 0 (never)")) == "10:10");
  CHECK(At(FindDiag(r, "concurrencyLimit: must be > 0")) == "11:23");
  CHECK(At(FindDiag(r, "unloadTimeout: expected an integer, got \"1.5\"")) == "12:20");
  CHECK(At(FindDiag(r, "env: expected a list, got \"A=1\"")) == "13:10");
  CHECK(At(FindDiag(r, "aliases: expected a list")) == "14:14");
}

TEST_CASE("A short healthCheckTimeout is raised to 15 with a hint", "[unit][config]") {
  auto r = Parse("healthCheckTimeout: 5\nmodels:\n  m:\n    cmd: srv --port ${PORT}\n");
  REQUIRE(r.ok());
  CHECK(r.config->health_check_timeout == seconds(15));
  CHECK(FindDiag(r, "raised to 15")->severity == Severity::kHint);
}

TEST_CASE("env entries need a '='", "[unit][config]") {
  auto r = Parse(
      "models:\n  m:\n    cmd: srv --port ${PORT}\n    env:\n      - CUDA_VISIBLE_DEVICES\n"
      "      - =x\n");
  REQUIRE_FALSE(r.ok());
  CHECK(FindDiag(r, "write CUDA_VISIBLE_DEVICES= to set it to the empty string")->pos.ToString() ==
        "config.yaml:5:9");
  CHECK(At(FindDiag(r, "has no variable name")) == "6:9");
}

TEST_CASE("cmd is required unless the model only proxies", "[unit][config]") {
  auto r = Parse("models:\n  m:\n    ttl: 5\n  n:\n");
  REQUIRE_FALSE(r.ok());
  CHECK(At(FindDiag(r, "model \"m\": cmd is required")) == "2:3");
  CHECK(At(FindDiag(r, "model \"n\": has no settings")) == "4:3");

  auto remote = Parse("models:\n  remote:\n    proxy: https://openrouter.ai/api/v1\n");
  INFO(remote.ErrorText());
  REQUIRE(remote.ok());
  CHECK(Model(remote, "remote").argv.empty());
  CHECK(FindDiag(remote, "has no cmd")->severity == Severity::kWarning);

  auto quote = Parse("models:\n  q:\n    cmd: srv --port ${PORT} \"unclosed\n");
  REQUIRE_FALSE(quote.ok());
  CHECK(FindDiag(quote, "model \"q\": cmd: unterminated double quote")->pos.ToString() ==
        "config.yaml:3:10");
}

TEST_CASE("A config without models loads with a warning", "[unit][config]") {
  auto r = Parse("logLevel: info\n");
  REQUIRE(r.ok());
  CHECK(r.config->models.empty());
  CHECK(r.config->groups.empty());
  CHECK(FindDiag(r, "defines no models")->severity == Severity::kWarning);
}

TEST_CASE("apiKeys must be non-empty and without spaces", "[unit][config]") {
  auto r = Parse(
      "apiKeys: [\"\", \"a b\", \"${undefined}\"]\nmodels:\n  m:\n    cmd: srv --port ${PORT}\n");
  REQUIRE_FALSE(r.ok());
  CHECK(FindDiag(r, "apiKeys: an API key cannot be empty"));
  CHECK(FindDiag(r, "apiKeys: an API key cannot contain spaces"));
  CHECK(At(FindDiag(r, "apiKeys: unknown macro ${undefined}")) == "1:23");
}

TEST_CASE("Windows paths get a hint", "[unit][config]") {
  auto r = Parse("models:\n  w:\n    cmd: C:\\llama\\server.exe --port ${PORT}\n");
  REQUIRE(r.ok());
  CHECK(Model(r, "w").argv[0] == "C:llamaserver.exe");
  CHECK(FindDiag(r, "looks like a Windows command line")->severity == Severity::kHint);
}

TEST_CASE("Setting values that are YAML 1.1 booleans get a hint", "[unit][config]") {
  auto r = Parse(
      "models:\n  m:\n    cmd: srv --port ${PORT}\n    filters:\n      setParams:\n"
      "        stream: off\n");
  REQUIRE(r.ok());
  CHECK(Model(r, "m").set_params["stream"] == nlohmann::json("off"));
  CHECK(At(FindDiag(r, "filters.setParams: off is the string \"off\"")) == "6:17");
}

}  // namespace
}  // namespace swapd
