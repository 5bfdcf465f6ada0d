// --config plus --config-dir: files read from disk and merged.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "tests/config/config_test_util.h"
#include "tests/support/temp_dir.h"

namespace swapd {
namespace {

namespace fs = std::filesystem;
using testing::FindDiag;
using testing::OptionsWithEnv;
using testing::TempDir;
using Words = std::vector<std::string>;

LoadResult Load(const std::string& config, const std::string& dir, bool strict = false) {
  LoadOptions o = OptionsWithEnv({}, strict);
  o.config_path = config;
  o.config_dir = dir;
  return LoadConfig(o);
}

TEST_CASE("--config-dir files are merged after --config, sorted by name", "[unit][config]") {
  TempDir tmp;
  std::string main = tmp.Write("config.yaml", R"(
startPort: 7000
apiKeys: [key-main]
macros:
  srv: /opt/llama-server --port ${PORT}
)");
  tmp.Write("d/b-second.yml", "models:\n  alpha:\n    cmd: ${srv} -m ${extra}\napiKeys: [key-b]\n");
  tmp.Write("d/a-first.yaml",
            "macros:\n  extra: a.gguf\nmodels:\n  zulu:\n    cmd: ${srv}\ngroups:\n  g:\n"
            "    members: [zulu, alpha]\n");
  tmp.Write("d/notes.txt", "not: yaml: at: all: [");
  tmp.Write("d/old.yaml.bak", "models: {broken");
  auto r = Load(main, tmp.Path("d"));
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  const Config& c = *r.config;
  CHECK(c.api_keys == Words{"key-main", "key-b"});  // lists append, in file order
  REQUIRE(c.models.size() == 2);
  CHECK(c.models.at("alpha").argv == Words{"/opt/llama-server", "--port", "7000", "-m", "a.gguf"});
  CHECK(c.models.at("zulu").port == 7001);  // ports follow sorted ids across files
  CHECK(c.groups.at("g").members == Words{"zulu", "alpha"});
  CHECK(c.models.at("alpha").pos.file == tmp.Path("d/b-second.yml"));
  CHECK(FindDiag(r, "defines no models") == nullptr);
}

TEST_CASE("--config-dir alone is enough", "[unit][config]") {
  TempDir tmp;
  tmp.Write("m.yaml", "models:\n  m:\n    cmd: srv --port ${PORT}\n");
  auto r = Load("", tmp.Path());
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  CHECK(r.config->models.count("m") == 1);
}

TEST_CASE("A model or group defined in two files is an error naming both", "[unit][config]") {
  TempDir tmp;
  std::string main = tmp.Write("config.yaml",
                               "models:\n  m:\n    cmd: srv --port ${PORT}\n"
                               "groups:\n  g:\n    members: [m]\n");
  std::string other = tmp.Write("d/x.yaml",
                                "models:\n  m:\n    cmd: other --port ${PORT}\n"
                                "groups:\n  g:\n    members: []\n");
  auto r = Load(main, tmp.Path("d"));
  REQUIRE_FALSE(r.ok());
  const Diagnostic* model = FindDiag(r, "model \"m\" is defined twice");
  REQUIRE(model);
  CHECK(model->pos.ToString() == other + ":2:3");
  CHECK(model->message.find(main + ":2:3") != std::string::npos);
  const Diagnostic* group = FindDiag(r, "group \"g\" is defined twice");
  REQUIRE(group);
  CHECK(group->pos.ToString() == other + ":5:3");
  CHECK(group->message.find(main + ":5:3") != std::string::npos);
}

TEST_CASE("A setting given twice must agree", "[unit][config]") {
  TempDir tmp;
  std::string main = tmp.Write("config.yaml",
                               "logLevel: info\nglobalTTL: 60\nmacros:\n  a: x\n"
                               "models:\n  m:\n    cmd: srv --port ${PORT}\n");
  std::string other = tmp.Write("d/x.yaml", "logLevel: info\nglobalTTL: 120\nmacros:\n  a: y\n");
  auto r = Load(main, tmp.Path("d"));
  REQUIRE_FALSE(r.ok());
  const Diagnostic* ttl = FindDiag(r, "globalTTL is set to \"120\" here and to \"60\" at");
  REQUIRE(ttl);
  CHECK(ttl->pos.ToString() == other + ":2:12");
  CHECK(ttl->message.find(main + ":2:12") != std::string::npos);
  CHECK(FindDiag(r, "macros.a is set to \"y\" here and to \"x\" at"));
  CHECK(FindDiag(r, "logLevel") == nullptr);  // same value twice is fine
}

TEST_CASE("A map in one file and a list in another is an error", "[unit][config]") {
  TempDir tmp;
  std::string main = tmp.Write("config.yaml", "models:\n  m:\n    cmd: srv --port ${PORT}\n");
  tmp.Write("d/x.yaml", "models: [m]\n");
  auto r = Load(main, tmp.Path("d"));
  REQUIRE_FALSE(r.ok());
  CHECK(FindDiag(r, "models is a list here but a map at"));
}

TEST_CASE("Errors in several files are all reported", "[unit][config]") {
  TempDir tmp;
  std::string main =
      tmp.Write("config.yaml", "models:\n  m:\n    cmd: srv ${nope} --port ${PORT}\n");
  std::string bad = tmp.Write("d/bad.yaml", "models:\n  n:\n    cmd: x\n   ttl: 1\n");
  auto r = Load(main, tmp.Path("d"));
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.diagnostics.size() >= 2);
  CHECK(r.diagnostics[0].pos.file == main);
  CHECK(FindDiag(r, "unknown macro ${nope}"));
  const Diagnostic* syntax = FindDiag(r, "YAML syntax error");
  REQUIRE(syntax);
  CHECK(syntax->pos.ToString() == bad + ":4:4");
}

TEST_CASE("A file that does not parse hides no other file's models", "[unit][config]") {
  TempDir tmp;
  std::string main = tmp.Write("config.yaml",
                               "groups:\n  g:\n    members: [lost]\n"
                               "hooks:\n  on_startup:\n    preload: [lost]\n");
  tmp.Write("d/models.yaml", "models:\n  lost:\n    cmd: [unclosed\n");
  auto r = Load(main, tmp.Path("d"));
  REQUIRE_FALSE(r.ok());
  INFO(r.ErrorText());
  CHECK(r.diagnostics.size() == 1);  // only the syntax error, no "lost is not a model"
  CHECK(FindDiag(r, "YAML syntax error"));
}

TEST_CASE("Missing files and directories are errors", "[unit][config]") {
  TempDir tmp;
  auto r = Load(tmp.Path("absent.yaml"), "");
  REQUIRE_FALSE(r.ok());
  CHECK(FindDiag(r, "cannot read the config"));
  CHECK(r.diagnostics[0].pos.file == tmp.Path("absent.yaml"));

  auto d = Load("", tmp.Path("no-such-dir"));
  REQUIRE_FALSE(d.ok());
  CHECK(FindDiag(d, "cannot read the config directory"));

  auto none = Load("", "");
  REQUIRE_FALSE(none.ok());
  CHECK(FindDiag(none, "no config given"));
}

TEST_CASE("A file without models is fine when the directory has them", "[unit][config]") {
  TempDir tmp;
  std::string main = tmp.Write("config.yaml", "healthCheckTimeout: 200\n");
  tmp.Write("models/a.yaml", "models:\n  a:\n    cmd: srv --port ${PORT}\n");
  auto r = Load(main, tmp.Path("models"));
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  CHECK(r.config->health_check_timeout == std::chrono::seconds(200));
  CHECK(r.diagnostics.empty());
}

}  // namespace
}  // namespace swapd
