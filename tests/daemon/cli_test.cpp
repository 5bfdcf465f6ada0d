// The command line: every flag in both spellings, the = form, defaults, and usage errors.
#include <catch2/catch.hpp>

#include "daemon/cli.h"

namespace swapd {
namespace {

using Args = std::vector<std::string>;
using Command = Options::Command;

Options ParseOk(const Args& args) {
  ParsedCommandLine r = ParseCommandLine(args);
  INFO("error: " << r.error);
  REQUIRE(r.error.empty());
  return r.options;
}

std::string ParseError(const Args& args) {
  ParsedCommandLine r = ParseCommandLine(args);
  REQUIRE_FALSE(r.error.empty());
  CHECK(r.error.find('\n') == std::string::npos);  // one line
  return r.error;
}

TEST_CASE("no arguments: serve config.yaml on 127.0.0.1:8080", "[unit][cli]") {
  Options o = ParseOk({});
  CHECK(o.command == Command::kServe);
  CHECK(o.config_path == "config.yaml");
  CHECK(o.config_dir.empty());
  CHECK(o.listen.ToString() == "127.0.0.1:8080");
  CHECK(o.listen.host == "127.0.0.1");
  CHECK(o.listen.port == 8080);
  CHECK_FALSE(o.watch_config);
  CHECK_FALSE(o.strict);
  CHECK(o.log_level.empty());
  CHECK_FALSE(o.json);
}

TEST_CASE("every flag in every spelling", "[unit][cli]") {
  // Each row: the arguments, then what they must set.
  for (std::string dashes : {"-", "--"}) {
    {
      INFO("spelling " << dashes);
      auto f = [&](const std::string& name) { return dashes + name; };

      Options o = ParseOk({f("config"), "a.yaml"});
      CHECK(o.config_path == "a.yaml");
      CHECK(ParseOk({f("config=b.yaml")}).config_path == "b.yaml");

      o = ParseOk({f("config-dir"), "conf.d"});
      CHECK(o.config_dir == "conf.d");
      CHECK(o.config_path.empty());  // no default file when only a directory is given
      CHECK(ParseOk({f("config-dir=x.d")}).config_dir == "x.d");
      o = ParseOk({f("config"), "a.yaml", f("config-dir"), "conf.d"});
      CHECK(o.config_path == "a.yaml");
      CHECK(o.config_dir == "conf.d");

      o = ParseOk({f("listen"), "0.0.0.0:9000"});
      CHECK(o.listen.ToString() == "0.0.0.0:9000");
      CHECK(o.listen.port == 9000);
      CHECK(ParseOk({f("listen=localhost:81")}).listen.ToString() == "localhost:81");

      CHECK(ParseOk({f("watch-config")}).watch_config);
      CHECK(ParseOk({f("watch-config=true")}).watch_config);
      CHECK_FALSE(ParseOk({f("watch-config=false")}).watch_config);
      CHECK(ParseOk({f("strict")}).strict);
      CHECK_FALSE(ParseOk({f("strict=0")}).strict);
      CHECK(ParseOk({f("shutdown-timeout"), "7"}).shutdown_timeout == std::chrono::seconds(7));

      for (const char* level : {"debug", "info", "warn", "error"}) {
        CHECK(ParseOk({f("log-level"), level}).log_level == level);
        CHECK(ParseOk({f("log-level=") + level}).log_level == level);
      }

      CHECK(ParseOk({f("version")}).command == Command::kVersion);
      CHECK(ParseOk({f("help")}).command == Command::kHelp);
      CHECK(ParseOk({f("h")}).command == Command::kHelp);

      o = ParseOk({"check", f("config"), "c.yaml", f("json"), f("strict")});
      CHECK(o.command == Command::kCheck);
      CHECK(o.config_path == "c.yaml");
      CHECK(o.json);
      CHECK(o.strict);
    }
  }
}

TEST_CASE("a llama-swap systemd ExecStart line parses unchanged", "[unit][cli]") {
  Options o =
      ParseOk({"-config", "/etc/llama-swap/config.yaml", "-listen", ":8080", "-watch-config"});
  CHECK(o.command == Command::kServe);
  CHECK(o.config_path == "/etc/llama-swap/config.yaml");
  CHECK(o.listen.ToString() == "0.0.0.0:8080");  // ":8080" is every interface, as in llama-swap
  CHECK(o.listen.host == "0.0.0.0");
  CHECK(o.watch_config);
}

TEST_CASE("check takes flags before and after it, and ignores serve flags", "[unit][cli]") {
  Options o = ParseOk({"--config", "x.yaml", "check", "--listen", "127.0.0.1:1234", "--json"});
  CHECK(o.command == Command::kCheck);
  CHECK(o.config_path == "x.yaml");
  CHECK(o.json);
  CHECK(ParseOk({"check"}).config_path == "config.yaml");
}

TEST_CASE("help and version win", "[unit][cli]") {
  CHECK(ParseOk({"--help", "--no-such-flag"}).command == Command::kHelp);
  CHECK(ParseOk({"check", "-h"}).command == Command::kHelp);
  CHECK(ParseOk({"--config", "x.yaml", "--version"}).command == Command::kVersion);
  CHECK(VersionText().rfind("swapd ", 0) == 0);
}

TEST_CASE("listen addresses", "[unit][cli]") {
  struct Row {
    std::string text, host;
    int port;
    std::string normalized;
  };
  for (const Row& row : std::vector<Row>{
           {"127.0.0.1:8080", "127.0.0.1", 8080, "127.0.0.1:8080"},
           {":8080", "0.0.0.0", 8080, "0.0.0.0:8080"},
           {"localhost:1", "localhost", 1, "localhost:1"},
           {"my-box.lan:65535", "my-box.lan", 65535, "my-box.lan:65535"},
           {"[::1]:8080", "::1", 8080, "[::1]:8080"},
           {"[::]:80", "::", 80, "[::]:80"},
           {"127.0.0.1:0", "127.0.0.1", 0, "127.0.0.1:0"},  // any free port
       }) {
    INFO(row.text);
    Result<ListenAddress> a = ParseListenAddress(row.text);
    REQUIRE(a.ok());
    CHECK(a.value().host == row.host);
    CHECK(a.value().port == row.port);
    CHECK(a.value().ToString() == row.normalized);
  }
}

TEST_CASE("usage errors name the problem in one line", "[unit][cli]") {
  struct Row {
    Args args;
    std::string expected;  // a substring of the error
  };
  for (const Row& row : std::vector<Row>{
           {{"--no-such-flag"}, "unknown flag --no-such-flag"},
           {{"-port=5"}, "unknown flag -port"},
           {{"--config"}, "missing value for --config"},
           {{"-config-dir"}, "missing value for -config-dir"},
           {{"--config="}, "missing value for --config"},
           {{"--config", "--strict"}, "missing value for --config"},
           {{"--listen"}, "missing value for --listen"},
           {{"--log-level"}, "missing value for --log-level"},
           {{"--log-level", "verbose"}, "invalid value \"verbose\" for --log-level"},
           {{"--shutdown-timeout", "soon"}, "invalid value \"soon\" for --shutdown-timeout"},
           {{"--shutdown-timeout", "-5"}, "missing value for --shutdown-timeout"},
           {{"--strict=maybe"}, "invalid value \"maybe\" for --strict"},
           {{"serve"}, "unexpected argument \"serve\""},
           {{"check", "check"}, "unexpected argument \"check\""},
           {{"check", "extra.yaml"}, "unexpected argument \"extra.yaml\""},
           {{"--", "--config"}, "unexpected argument \"--config\""},
           {{"---config", "x"}, "bad flag syntax: ---config"},
           {{"--json"}, "--json is only valid with \"swapd check\""},
           {{"--listen", "8080"}, "bad listen address \"8080\""},
           {{"--listen", "localhost"}, "expected HOST:PORT"},
           {{"--listen", "127.0.0.1:65536"}, "port must be a number from 0 to 65535"},
           {{"--listen", "127.0.0.1:123456"}, "port must be a number from 0 to 65535"},
           {{"--listen", "127.0.0.1:http"}, "port must be a number"},
           {{"--listen", "127.0.0.1:"}, "port must be a number"},
           {{"--listen", "::1:8080"}, "needs brackets"},
           {{"--listen", "[::1]8080"}, "expected HOST:PORT"},
           {{"--listen", "[::1:8080"}, "missing ']'"},
           {{"--listen", "[zz::1]:8080"}, "not an IPv6 address"},
           {{"--listen", "300.1.1.1:80"}, "not an IPv4 address"},
           {{"--listen", "bad host:80"}, "not a host name"},
       }) {
    std::string joined;
    for (const auto& a : row.args) joined += a + " ";
    INFO("args: " << joined);
    CHECK_THAT(ParseError(row.args), Catch::Contains(row.expected));
  }
}

TEST_CASE("--containment: auto by default, cgroup or marker on request", "[unit][cli]") {
  CHECK(ParseOk({}).containment == ContainmentMode::kAuto);
  CHECK(ParseOk({"--containment", "marker"}).containment == ContainmentMode::kMarker);
  CHECK(ParseOk({"-containment=cgroup"}).containment == ContainmentMode::kCgroup);
  CHECK(ParseOk({"--containment", "auto"}).containment == ContainmentMode::kAuto);
  CHECK_THAT(ParseError({"--containment", "docker"}),
             Catch::Contains("want auto, cgroup or marker"));
}

TEST_CASE("usage text documents every flag and the check subcommand", "[unit][cli]") {
  std::string usage = UsageText();
  for (const char* word :
       {"--config ", "--config-dir", "--listen", "--watch-config", "--strict", "--log-level",
        "--shutdown-timeout", "--json", "--version", "--help", "--containment", "swapd check",
        "127.0.0.1:8080", "[::1]:8080", ":8080", "exit status"}) {
    CHECK_THAT(usage, Catch::Contains(word));
  }
}

}  // namespace
}  // namespace swapd
