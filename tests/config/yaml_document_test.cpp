#include "config/yaml_document.h"

#include <catch2/catch.hpp>

#include "config/yaml_scalar.h"

namespace swapd {
namespace {

YamlNodePtr Doc(std::string_view text, DiagnosticSink& sink) {
  return ParseYaml(text, "t.yaml", sink);
}

const YamlNode& Get(const YamlNode& map, std::string_view key) {
  const YamlEntry* e = map.Find(key);
  REQUIRE(e != nullptr);
  return *e->value;
}

TEST_CASE("ParseYaml keeps 1-based positions of keys and values", "[unit][config]") {
  DiagnosticSink sink;
  auto root = Doc("a: 1\nmodels:\n  m:\n    cmd: x y\n", sink);
  REQUIRE(root);
  CHECK_FALSE(sink.has_errors());
  const YamlNode& cmd = Get(Get(Get(*root, "models"), "m"), "cmd");
  CHECK(cmd.value == "x y");
  CHECK(cmd.pos.ToString() == "t.yaml:4:10");
  CHECK(root->Find("models")->key->pos.ToString() == "t.yaml:2:1");
  CHECK(cmd.Locate("y").ToString() == "t.yaml:4:12");
  CHECK(cmd.Locate("absent").ToString() == "t.yaml:4:10");
}

TEST_CASE("Locate points inside block scalars", "[unit][config]") {
  DiagnosticSink sink;
  auto root = Doc("cmd: |\n  server\n    --port ${PROT}\n", sink);
  REQUIRE(root);
  const YamlNode& cmd = Get(*root, "cmd");
  CHECK(cmd.value == "server\n  --port ${PROT}\n");
  CHECK(cmd.Locate("${PROT}").ToString() == "t.yaml:3:12");
  CHECK(cmd.Mentions("${PROT}"));
}

TEST_CASE("Block scalars keep llama-swap's text", "[unit][config]") {
  DiagnosticSink sink;
  auto root =
      Doc("lit: |\n  a\n    b\n  c\n"
          "fold: >\n  a\n  b\n    more\n  c\n"
          "strip: >-\n  x\n  y\n",
          sink);
  REQUIRE(root);
  CHECK(Get(*root, "lit").value == "a\n  b\nc\n");
  CHECK(Get(*root, "fold").value == "a b\n  more\nc\n");
  CHECK(Get(*root, "strip").value == "x y");
}

TEST_CASE("Anchors, aliases and merge keys", "[unit][config]") {
  DiagnosticSink sink;
  auto root =
      Doc("base: &b\n  ttl: 300\n  cmd: run\n"
          "other: &o\n  proxy: p\n  ttl: 1\n"
          "m1:\n  <<: *b\n  ttl: 5\n"
          "m2:\n  <<: [*b, *o]\n"
          "alias: *b\n",
          sink);
  REQUIRE(root);
  CHECK_FALSE(sink.has_errors());
  const YamlNode& m1 = Get(*root, "m1");
  CHECK(Get(m1, "ttl").value == "5");  // explicit keys win
  CHECK(Get(m1, "cmd").value == "run");
  CHECK(m1.entries.size() == 2);
  const YamlNode& m2 = Get(*root, "m2");
  CHECK(Get(m2, "ttl").value == "300");  // earlier merged maps win
  CHECK(Get(m2, "proxy").value == "p");
  CHECK(Get(Get(*root, "alias"), "cmd").value == "run");
}

TEST_CASE("Duplicate keys are errors, as in Go's yaml.v3", "[unit][config]") {
  DiagnosticSink sink;
  auto root = Doc("a: 1\nb: 2\na: 3\n", sink);
  REQUIRE(root);
  REQUIRE(sink.items().size() == 1);
  CHECK(sink.items()[0].ToString() ==
        "t.yaml:3:1: error: duplicate key \"a\" (first defined at line 1)");
}

TEST_CASE("YAML syntax errors keep yaml-cpp's position", "[unit][config]") {
  DiagnosticSink sink;
  CHECK(Doc("models:\n  a:\n    cmd: x\n   proxy: y\n", sink) == nullptr);
  REQUIRE(sink.items().size() == 1);
  CHECK(sink.items()[0].pos.ToString() == "t.yaml:4:4");
  CHECK(sink.items()[0].message.find("YAML syntax error") != std::string::npos);

  DiagnosticSink sink2;
  CHECK(Doc("a: [1, 2\n", sink2) == nullptr);
  REQUIRE(sink2.items().size() == 1);
  CHECK(sink2.items()[0].pos.line == 2);

  DiagnosticSink sink3;
  CHECK(Doc("a: *nope\n", sink3) == nullptr);
  REQUIRE(sink3.items().size() == 1);
  CHECK(sink3.items()[0].pos.ToString() == "t.yaml:1:4");
}

TEST_CASE("An empty document is a null root", "[unit][config]") {
  DiagnosticSink sink;
  auto root = Doc("# nothing\n", sink);
  REQUIRE(root);
  CHECK(root->is_null());
}

TEST_CASE("Scalars are typed like Go's yaml.v3", "[unit][config]") {
  DiagnosticSink sink;
  auto root =
      Doc("i: 8080\nneg: -3\nhex: 0x1F\noct: 0o17\nf: 1.0\ne: 1e3\nb: true\nB: False\n"
          "on: on\nyes: yes\nq: \"8080\"\nn: ~\nempty:\ns: hello\nblock: |\n  12\nver: 1.2.3\n"
          "str: !!str 5\n",
          sink);
  REQUIRE(root);
  auto v = [&](std::string_view k) { return ScalarToJson(Get(*root, k)); };
  CHECK(v("i") == nlohmann::json(8080));
  CHECK(v("neg") == nlohmann::json(-3));
  CHECK(v("hex") == nlohmann::json(31));
  CHECK(v("oct") == nlohmann::json(15));
  CHECK(v("f").is_number_float());
  CHECK(v("e") == nlohmann::json(1000.0));
  CHECK(v("b") == nlohmann::json(true));
  CHECK(v("B") == nlohmann::json(false));
  CHECK(v("on") == nlohmann::json("on"));
  CHECK(v("yes") == nlohmann::json("yes"));
  CHECK(v("q") == nlohmann::json("8080"));
  CHECK(v("n").is_null());
  CHECK(v("empty").is_null());
  CHECK(v("s") == nlohmann::json("hello"));
  CHECK(v("block") == nlohmann::json("12\n"));
  CHECK(v("ver") == nlohmann::json("1.2.3"));
  CHECK(v("str") == nlohmann::json("5"));
}

TEST_CASE("GoFormat prints values like Go's %v", "[unit][config]") {
  CHECK(GoFormat(1.0) == "1");
  CHECK(GoFormat(0.7) == "0.7");
  CHECK(GoFormat(0.95) == "0.95");
  CHECK(GoFormat(-2.5) == "-2.5");
  CHECK(GoFormat(123456.0) == "123456");
  CHECK(GoFormat(1e6) == "1e+06");
  CHECK(GoFormat(1234567.0) == "1.234567e+06");
  CHECK(GoFormat(0.0001) == "0.0001");
  CHECK(GoFormat(0.00001) == "1e-05");
  CHECK(GoFormat(nlohmann::json(65536)) == "65536");
  CHECK(GoFormat(true) == "true");
  CHECK(GoFormat("text") == "text");
}

TEST_CASE("YAML 1.1 booleans are recognized for typed bool fields", "[unit][config]") {
  CHECK(Yaml11Bool("yes") == true);
  CHECK(Yaml11Bool("Off") == false);
  CHECK_FALSE(Yaml11Bool("true").has_value());
  CHECK(Yaml12Bool("TRUE") == true);
  CHECK_FALSE(Yaml12Bool("on").has_value());
}

}  // namespace
}  // namespace swapd
