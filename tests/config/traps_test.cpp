// The traps real llama-swap configs contain (see the compat corpus), each in a small config
// written here: swapd must read them exactly as llama-swap does.
#include <catch2/catch.hpp>

#include "tests/config/config_test_util.h"

namespace swapd {
namespace {

using testing::FindDiag;
using testing::Model;
using testing::Parse;
using Words = std::vector<std::string>;

TEST_CASE("Trap: a quoted string spanning folded lines stays one word", "[unit][config]") {
  auto r = Parse(R"(
models:
  m:
    proxy: http://127.0.0.1:9000
    cmd: >
      bash -c "source /opt/env.sh > /dev/null && exec server
      -m model.gguf
      --port 9000"
)");
  CHECK(Model(r, "m").argv ==
        Words{"bash", "-c",
              "source /opt/env.sh > /dev/null && exec server -m model.gguf --port 9000"});
}

TEST_CASE("Trap: folded cmd with more-indented lines and a comment header", "[unit][config]") {
  auto r = Parse(R"(
models:
  m:
    cmd: | # the comment after | is YAML's, not part of cmd
      server
           --port ${PORT}
      # --disabled-flag
           --ctx-size 4096
  n:
    cmd: >
      server
        --port ${PORT}
      #commented
        -ngl 99
)");
  CHECK(Model(r, "m").argv == Words{"server", "--port", "5800", "--ctx-size", "4096"});
  CHECK(Model(r, "n").argv == Words{"server", "--port", "5801", "-ngl", "99"});
}

TEST_CASE("Trap: groups before models, and a column-0 comment in a cmd block", "[unit][config]") {
  auto r = Parse(R"(groups:
  "llms":
    swap: true
    exclusive: false
    members:
      - "b"
models:
# a comment at column 0 between models
  "a":
    cmd: |
      server --port ${PORT}
      --flag
#     --old-flag 'with an unbalanced quote
    ttl: 10
  "b":
    cmd: server --port ${PORT})");  // and no final newline
  CHECK(Model(r, "a").argv == Words{"server", "--port", "5800", "--flag"});
  CHECK(Model(r, "a").ttl == std::chrono::seconds(10));
  CHECK(Model(r, "b").group == "llms");
  CHECK_FALSE(r.config->groups.at("llms").exclusive);
}

TEST_CASE("Trap: anchors and merge keys between models", "[unit][config]") {
  auto r = Parse(R"(
models:
  small: &base
    proxy: "http://${MODEL_ID}:${PORT}"
    cmd: /bin/sh -c 'PORT=${PORT} docker compose up ${MODEL_ID}'
    cmdStop: docker compose stop ${MODEL_ID}
    ttl: 300
  large:
    <<: *base
    ttl: 600
)");
  const ModelConfig& large = Model(r, "large");
  CHECK(large.argv == Words{"/bin/sh", "-c", "PORT=5800 docker compose up large"});
  CHECK(large.stop_argv == Words{"docker", "compose", "stop", "large"});
  CHECK(large.proxy == "http://large:5800");
  CHECK(large.ttl == std::chrono::seconds(600));
  CHECK(Model(r, "small").proxy == "http://small:5801");
  CHECK(Model(r, "small").ttl == std::chrono::seconds(300));
}

TEST_CASE("Trap: block macros with trailing spaces and newlines", "[unit][config]") {
  auto r = Parse(
      "macros:\n"
      "  docker_base: |\n"
      "    docker run --rm -p \"${PORT}:8000\"   \n"
      "    -e 'A=1'     \n"
      "  image: |\n"
      "    vllm/vllm-openai:v1    \n"
      "models:\n"
      "  emb:\n"
      "    cmd: |\n"
      "      ${docker_base} --name \"emb-${PORT}\" \n"
      "      ${image} --model x      \n"
      "    cmdStop: |\n"
      "      docker stop \"emb-${PORT}\"       \n");
  CHECK(Model(r, "emb").argv == Words{"docker", "run", "--rm", "-p", "5800:8000", "-e", "A=1",
                                      "--name", "emb-5800", "vllm/vllm-openai:v1", "--model", "x"});
  CHECK(Model(r, "emb").stop_argv == Words{"docker", "stop", "emb-5800"});
}

TEST_CASE("Trap: model ids with '/', ':' and spaces", "[unit][config]") {
  auto r = Parse(R"(
models:
  "unsloth/gpt-oss-20b-GGUF:UD-Q4_K_XL":
    cmd: server --port ${PORT} -hf ${MODEL_ID}
  "GLM Flash Vision":
    cmd: server --port ${PORT} --alias "${MODEL_ID}"
    aliases: ["glm:vision"]
)");
  const ModelConfig& gpt = Model(r, "unsloth/gpt-oss-20b-GGUF:UD-Q4_K_XL");
  CHECK(gpt.argv ==
        Words{"server", "--port", "5801", "-hf", "unsloth/gpt-oss-20b-GGUF:UD-Q4_K_XL"});
  const ModelConfig& glm = Model(r, "GLM Flash Vision");  // 'G' sorts before 'u'
  CHECK(glm.argv == Words{"server", "--port", "5800", "--alias", "GLM Flash Vision"});
  CHECK(r.config->FindModel("glm:vision") == &glm);
}

TEST_CASE("Trap: empty env values and commented-out env items", "[unit][config]") {
  auto r = Parse(R"(
models:
  m:
    cmd: server --port ${PORT}
    env:
      - "CUDA_VISIBLE_DEVICES="
      - HIPFIRE_DFLASH_DRAFT=
      - # DISABLED=1
      - "GGML_VK_VISIBLE_DEVICES=0"
)");
  using Env = std::vector<std::pair<std::string, std::string>>;
  CHECK(Model(r, "m").env == Env{{"CUDA_VISIBLE_DEVICES", ""},
                                 {"HIPFIRE_DFLASH_DRAFT", ""},
                                 {"GGML_VK_VISIBLE_DEVICES", "0"}});
}

TEST_CASE("Trap: CRLF line endings read like LF", "[unit][config]") {
  auto r = Parse(
      "models:\r\n  m:\r\n    cmd: |\r\n      server\r\n      --port ${PORT}\r\n"
      "    ttl: 5\r\n");
  CHECK(Model(r, "m").argv == Words{"server", "--port", "5800"});
  CHECK(Model(r, "m").ttl == std::chrono::seconds(5));
}

TEST_CASE("Trap: regex arguments keep their backslashes inside quotes", "[unit][config]") {
  auto r = Parse(R"(
models:
  m:
    cmd: |
      taskset -c 0-15 server --port ${PORT}
      -ot "blk\.(1[0-9])\.ffn_.*=CPU"
      --override-tensor 'exps\.=CPU'
)");
  CHECK(Model(r, "m").argv == Words{"taskset", "-c", "0-15", "server", "--port", "5800", "-ot",
                                    "blk\\.(1[0-9])\\.ffn_.*=CPU", "--override-tensor",
                                    "exps\\.=CPU"});
}

TEST_CASE("Trap: a shell command substitution in cmdStop is kept literally", "[unit][config]") {
  auto r = Parse(R"(
models:
  m:
    cmd: server --port ${PORT}
    cmdStop: bash -c 'kill $(lsof -t -i:${PORT})'
)");
  CHECK(Model(r, "m").stop_argv == Words{"bash", "-c", "kill $(lsof -t -i:5800)"});
}

TEST_CASE("Trap: a file with unknown top-level keys still loads", "[unit][config]") {
  auto r = Parse(R"(
host: "0.0.0.0"
port: 8080
maxRunningModels: 2
models:
  m:
    cmd: server --port ${PORT}
    headers:
      Authorization: "Bearer x"
)");
  REQUIRE(r.ok());
  CHECK(FindDiag(r, "unknown key host"));
  CHECK(FindDiag(r, "unknown key port"));
  CHECK(FindDiag(r, "model \"m\": unknown key headers"));
}

}  // namespace
}  // namespace swapd
