// Macro expansion through the whole loader: order, overrides, types, ${env.X}, ${MODEL_ID},
// ${PORT} allocation and ${PID}.
#include <catch2/catch.hpp>

#include "tests/config/config_test_util.h"

namespace swapd {
namespace {

using testing::At;
using testing::FindDiag;
using testing::Model;
using testing::Parse;
using Words = std::vector<std::string>;

TEST_CASE("Macros may use macros declared before them", "[unit][config]") {
  auto r = Parse(R"(
macros:
  bin: /opt/llama-server
  base: "${bin} --port ${PORT}"
  args: "${base} -ngl 99"
models:
  m:
    cmd: ${args} -m ${MODEL_ID}.gguf
)");
  INFO(r.ErrorText());
  CHECK(Model(r, "m").argv ==
        Words{"/opt/llama-server", "--port", "5800", "-ngl", "99", "-m", "m.gguf"});
}

TEST_CASE("A macro that uses a later macro is reported where it is used", "[unit][config]") {
  auto r = Parse(R"(
macros:
  early: "x ${late}"
  late: y
models:
  m:
    cmd: run ${early}
)");
  REQUIRE_FALSE(r.ok());
  const Diagnostic* d = FindDiag(r, "${late}");
  REQUIRE(d);
  CHECK(d->message.find("declared after") != std::string::npos);
  CHECK(d->message.find("through macro \"early\"") != std::string::npos);
  CHECK(At(d) == "3:13");
}

TEST_CASE("A per-model macro replaces the global one in place", "[unit][config]") {
  auto r = Parse(R"(
macros:
  ctx: 4096
  args: "--ctx-size ${ctx}"
models:
  a:
    macros:
      ctx: 65536
    cmd: srv ${args}
    proxy: http://127.0.0.1:8001
  b:
    cmd: srv ${args}
    proxy: http://127.0.0.1:8002
)");
  INFO(r.ErrorText());
  CHECK(Model(r, "a").argv == Words{"srv", "--ctx-size", "65536"});
  CHECK(Model(r, "b").argv == Words{"srv", "--ctx-size", "4096"});
}

TEST_CASE("Macro values keep llama-swap's formatting", "[unit][config]") {
  auto r = Parse(R"(
macros:
  temp: 1.0
  top_p: 0.95
  ngl: 99
  flag: true
  fa: on
models:
  m:
    cmd: srv --temp ${temp} --top-p ${top_p} -ngl ${ngl} --x ${flag} -fa ${fa}
    proxy: http://127.0.0.1:8001
)");
  INFO(r.ErrorText());
  CHECK(Model(r, "m").argv ==
        Words{"srv", "--temp", "1", "--top-p", "0.95", "-ngl", "99", "--x", "true", "-fa", "on"});
  const Diagnostic* hint = FindDiag(r, "macro \"fa\"");
  REQUIRE(hint);
  CHECK(hint->severity == Diagnostic::Severity::kHint);
}

TEST_CASE("A macro with spaces becomes several words unless quoted", "[unit][config]") {
  auto r = Parse(R"(
macros:
  opts: "-a 1 -b 2"
  path: "/my models/x.gguf"
models:
  m:
    cmd: srv ${opts} -m "${path}" --raw ${path}
    proxy: http://127.0.0.1:8001
)");
  INFO(r.ErrorText());
  CHECK(Model(r, "m").argv == Words{"srv", "-a", "1", "-b", "2", "-m", "/my models/x.gguf", "--raw",
                                    "/my", "models/x.gguf"});
}

TEST_CASE("Comment lines are dropped before macros are expanded", "[unit][config]") {
  auto r = Parse(R"(
macros:
  base: |
    srv
    # a comment inside a macro
    --port ${PORT}
models:
  m:
    cmd: |
      # ${not_a_macro} in a comment is never expanded
      ${base}
      --flag \
        value
)");
  INFO(r.ErrorText());
  CHECK(Model(r, "m").argv == Words{"srv", "--port", "5800", "--flag", "value"});
}

TEST_CASE("A whole-value macro keeps its type in setParams and metadata", "[unit][config]") {
  auto r = Parse(R"(
macros:
  temp: 0.7
  ctx: 8192
  think: false
models:
  m:
    cmd: srv --port ${PORT}
    filters:
      setParams:
        temperature: ${temp}
        note: "t=${temp}"
        chat_template_kwargs:
          enable_thinking: ${think}
    metadata:
      port: ${PORT}
      ctx: ${ctx}
      id: ${MODEL_ID}
      list: ["${ctx}", "model ${MODEL_ID}"]
)");
  INFO(r.ErrorText());
  const ModelConfig& m = Model(r, "m");
  CHECK(m.set_params["temperature"] == nlohmann::json(0.7));
  CHECK(m.set_params["note"] == nlohmann::json("t=0.7"));
  CHECK(m.set_params["chat_template_kwargs"]["enable_thinking"] == nlohmann::json(false));
  CHECK(m.metadata["port"] == nlohmann::json(5800));
  CHECK(m.metadata["ctx"] == nlohmann::json(8192));
  CHECK(m.metadata["id"] == nlohmann::json("m"));
  CHECK(m.metadata["list"] == nlohmann::json::array({8192, "model m"}));
}

TEST_CASE("${env.NAME} is expanded first, also inside macros", "[unit][config]") {
  auto r = Parse(R"(
# ${env.IN_A_COMMENT} is ignored
macros:
  root: "${env.MODELS}/gguf"
models:
  m:
    cmd: srv -m ${root}/a.gguf --key ${env.KEY}
    proxy: http://127.0.0.1:8001
    env:
      - "HOME_DIR=${env.MODELS}"
)",
                 {{"MODELS", "/data"}, {"KEY", "k 1"}});
  INFO(r.ErrorText());
  const ModelConfig& m = Model(r, "m");
  CHECK(m.argv == Words{"srv", "-m", "/data/gguf/a.gguf", "--key", "k", "1"});
  REQUIRE(m.env.size() == 1);
  CHECK(m.env[0].second == "/data");
}

TEST_CASE("An unset ${env.NAME} is an error at its position", "[unit][config]") {
  auto r = Parse("models:\n  m:\n    cmd: srv --dir ${env.NOPE} --port ${PORT}\n");
  REQUIRE_FALSE(r.ok());
  const Diagnostic* d = FindDiag(r, "environment variable NOPE is not set");
  REQUIRE(d);
  CHECK(d->pos.ToString() == "config.yaml:3:20");
  CHECK(testing::CountSeverity(r, Diagnostic::Severity::kError) == 1);
}

TEST_CASE("Ports go to models whose cmd uses ${PORT}, in sorted id order", "[unit][config]") {
  auto r = Parse(R"(
startPort: 9000
models:
  zeta:
    cmd: srv --port ${PORT}
  alpha:
    cmd: srv --port ${PORT}
  fixed:
    cmd: srv --port 7000
    proxy: http://127.0.0.1:7000/
  beta:
    cmd: srv --port ${PORT}
    cmdStop: stop ${PORT}
    proxy: http://127.0.0.1:${PORT}
)");
  INFO(r.ErrorText());
  CHECK(Model(r, "alpha").port == 9000);
  CHECK(Model(r, "beta").port == 9001);
  CHECK(Model(r, "zeta").port == 9002);
  CHECK(Model(r, "fixed").port == 0);
  CHECK(Model(r, "fixed").proxy == "http://127.0.0.1:7000");
  CHECK(Model(r, "alpha").proxy == "http://localhost:9000");
  CHECK(Model(r, "beta").proxy == "http://127.0.0.1:9001");
  CHECK(Model(r, "beta").stop_argv == Words{"stop", "9001"});
}

TEST_CASE("${PORT} in a macro used by cmd counts as cmd using it", "[unit][config]") {
  auto r = Parse("macros:\n  srv: srv --port ${PORT}\nmodels:\n  m:\n    cmd: ${srv}\n");
  CHECK(Model(r, "m").port == 5800);
}

TEST_CASE("A proxy with ${PORT} needs a cmd with ${PORT}", "[unit][config]") {
  auto r = Parse("models:\n  m:\n    cmd: srv --port 8000\n");
  REQUIRE_FALSE(r.ok());
  const Diagnostic* d = FindDiag(r, "default proxy");
  REQUIRE(d);
  CHECK(At(d) == "2:3");

  auto r2 = Parse("models:\n  m:\n    cmd: srv\n    proxy: http://h:${PORT}\n");
  REQUIRE_FALSE(r2.ok());
  const Diagnostic* d2 = FindDiag(r2, "proxy uses ${PORT} but cmd does not");
  REQUIRE(d2);
  CHECK(At(d2) == "4:21");
}

TEST_CASE("${PID} stays in cmdStop and is refused elsewhere", "[unit][config]") {
  auto r = Parse("models:\n  m:\n    cmd: srv --port ${PORT}\n    cmdStop: kill -TERM ${PID}\n");
  CHECK(Model(r, "m").stop_argv == Words{"kill", "-TERM", "${PID}"});

  auto bad = Parse("models:\n  m:\n    cmd: srv --port ${PORT} --pid ${PID}\n");
  REQUIRE_FALSE(bad.ok());
  const Diagnostic* d = FindDiag(bad, "only cmdStop may use ${PID}");
  REQUIRE(d);
  CHECK(At(d) == "3:35");
}

TEST_CASE("${MODEL_ID} works in cmd, cmdStop, proxy and names", "[unit][config]") {
  auto r = Parse(R"(
models:
  "org/model:q4 x":
    cmd: docker run --name "${MODEL_ID}" -p ${PORT}:80 img
    cmdStop: docker stop "${MODEL_ID}"
    proxy: http://${MODEL_ID}:${PORT}
    name: "Model ${MODEL_ID}"
)");
  INFO(r.ErrorText());
  const ModelConfig& m = Model(r, "org/model:q4 x");
  CHECK(m.argv == Words{"docker", "run", "--name", "org/model:q4 x", "-p", "5800:80", "img"});
  CHECK(m.stop_argv == Words{"docker", "stop", "org/model:q4 x"});
  CHECK(m.proxy == "http://org/model:q4 x:5800");
  CHECK(m.name == "Model org/model:q4 x");
}

TEST_CASE("Bad macro definitions are reported", "[unit][config]") {
  auto r = Parse(R"(
macros:
  "bad name": x
  PORT: 1
  self: "a ${self}"
  list: [1, 2]
models:
  m:
    cmd: srv --port ${PORT}
)");
  REQUIRE_FALSE(r.ok());
  CHECK(At(FindDiag(r, "macro \"bad name\": invalid name")) == "3:3");
  CHECK(At(FindDiag(r, "macro \"PORT\": the name is reserved")) == "4:3");
  CHECK(At(FindDiag(r, "macro \"self\": refers to itself")) == "5:12");
  CHECK(At(FindDiag(r, "macro \"list\": the value must be")) == "6:9");
}

TEST_CASE("Unknown macros are named with model, field and position", "[unit][config]") {
  auto r = Parse(R"(
models:
  qwen3-4b-duo:
    cmd: |
      srv --port ${PORT}
      --model ${PROT}
    checkEndpoint: /health/${nope}
)");
  REQUIRE_FALSE(r.ok());
  const Diagnostic* d = FindDiag(r, "unknown macro ${PROT} in cmd");
  REQUIRE(d);
  CHECK(d->ToString() ==
        "config.yaml:6:15: error: model \"qwen3-4b-duo\": unknown macro ${PROT} in cmd");
  CHECK(At(FindDiag(r, "unknown macro ${nope} in checkEndpoint")) == "7:28");
}

}  // namespace
}  // namespace swapd
