// `swapd bench`'s command line: defaults, every flag, models anywhere, and usage errors; and how
// `swapd bench ...` reaches it through the daemon's command line.
#include <catch2/catch.hpp>

#include "daemon/cli.h"
#include "scoreboard/bench_options.h"

namespace swapd {
namespace {

using Args = std::vector<std::string>;

BenchOptions BenchOk(const Args& args) {
  ParsedBenchOptions r = ParseBenchOptions(args);
  INFO("error: " << r.error);
  REQUIRE(r.error.empty());
  REQUIRE_FALSE(r.help);
  return r.options;
}

std::string BenchError(const Args& args) {
  ParsedBenchOptions r = ParseBenchOptions(args);
  REQUIRE_FALSE(r.error.empty());
  CHECK(r.error.find('\n') == std::string::npos);
  return r.error;
}

TEST_CASE("bench options: defaults", "[unit][bench]") {
  BenchOptions o = BenchOk({});
  CHECK(o.url == "http://127.0.0.1:8080");
  CHECK(o.config_path.empty());
  CHECK(o.models.empty());
  CHECK(o.duos.empty());
  CHECK(o.runs == 3);
  CHECK(o.prompt_tokens == 512);
  CHECK(o.gen_tokens == 128);
  CHECK_FALSE(o.json);
  CHECK(o.gates);
  CHECK_FALSE(o.strict);
  CHECK_FALSE(o.compare);
  CHECK(o.store.empty());
  CHECK(o.output_dir == "swapd-bench-out");
  CHECK(o.noise.other_cpu_cores == NoiseLimits{}.other_cpu_cores);
}

TEST_CASE("bench options: every flag, models anywhere", "[unit][bench]") {
  BenchOptions o = BenchOk({"qwen",
                            "--config",
                            "c.yaml",
                            "-runs=5",
                            "--prompt-tokens",
                            "64",
                            "--gen-tokens=16",
                            "gemma",
                            "--duo",
                            "a,b",
                            "--duo=c,d",
                            "--json",
                            "--markdown",
                            "out.md",
                            "--gates",
                            "g1.yaml",
                            "--gates=g2.yaml",
                            "--strict",
                            "--compare",
                            "--store",
                            "/tmp/x.db",
                            "--api-key",
                            "k",
                            "--output-dir",
                            "od",
                            "--noise-cpu",
                            "0.3",
                            "--noise-disk",
                            "100",
                            "--noise-cache=7.5"});
  CHECK(o.config_path == "c.yaml");
  CHECK(o.url.empty());
  CHECK(o.models == Args{"qwen", "gemma"});
  REQUIRE(o.duos.size() == 2);
  CHECK(o.duos[0] == std::pair<std::string, std::string>{"a", "b"});
  CHECK(o.duos[1] == std::pair<std::string, std::string>{"c", "d"});
  CHECK(o.runs == 5);
  CHECK(o.prompt_tokens == 64);
  CHECK(o.gen_tokens == 16);
  CHECK(o.json);
  CHECK(o.markdown_path == "out.md");
  CHECK(o.gate_files == Args{"g1.yaml", "g2.yaml"});
  CHECK(o.strict);
  CHECK(o.compare);
  CHECK(o.store == "/tmp/x.db");
  CHECK(o.api_key == "k");
  CHECK(o.output_dir == "od");
  CHECK(o.noise.other_cpu_cores == Approx(0.3));
  CHECK(o.noise.disk_mb_per_s == Approx(100));
  CHECK(o.noise.page_cache_mb_per_s == Approx(7.5));

  BenchOptions url = BenchOk({"--url", "http://10.0.0.2:9000/", "--no-gates", "--store", "none"});
  CHECK(url.url == "http://10.0.0.2:9000");
  CHECK_FALSE(url.gates);
  CHECK(url.store == "none");
  CHECK(BenchOk({"--", "--odd-model-id"}).models == Args{"--odd-model-id"});
}

TEST_CASE("bench options: usage errors", "[unit][bench]") {
  CHECK(BenchError({"--config", "a.yaml", "--url", "http://x:1"}).find("exclude") !=
        std::string::npos);
  CHECK(BenchError({"--runs", "0"}).find("--runs") != std::string::npos);
  CHECK(BenchError({"--runs", "three"}).find("whole number") != std::string::npos);
  CHECK(BenchError({"--gen-tokens", "-4"}).find("--gen-tokens") != std::string::npos);
  CHECK(BenchError({"--prompt-tokens"}).find("missing value") != std::string::npos);
  CHECK(BenchError({"--store", "--json"}).find("missing value for --store") != std::string::npos);
  CHECK(BenchError({"--duo", "a"}).find("A,B") != std::string::npos);
  CHECK(BenchError({"--duo", "a,b,c"}).find("A,B") != std::string::npos);
  CHECK(BenchError({"--duo", "a,a"}).find("two different") != std::string::npos);
  CHECK(BenchError({"--url", "https://x:1"}).find("https") != std::string::npos);
  CHECK(BenchError({"--noise-cpu=-1"}).find(">= 0") != std::string::npos);
  CHECK(BenchError({"--noise-disk", "lots"}).find("--noise-disk") != std::string::npos);
  CHECK(BenchError({"--json=true"}).find("takes no value") != std::string::npos);
  CHECK(BenchError({"--bogus"}).find("unknown flag --bogus") != std::string::npos);
  CHECK(BenchError({""}).find("empty model id") != std::string::npos);
}

TEST_CASE("bench options: help", "[unit][bench]") {
  CHECK(ParseBenchOptions({"m", "--help"}).help);
  CHECK(ParseBenchOptions({"-h"}).help);
  CHECK(BenchUsageText().find("--noise-cache") != std::string::npos);
}

TEST_CASE("swapd bench on the daemon's command line", "[unit][bench][cli]") {
  ParsedCommandLine r = ParseCommandLine({"bench", "--url", "http://127.0.0.1:9", "m1", "--json"});
  REQUIRE(r.error.empty());
  CHECK(r.options.command == Options::Command::kBench);
  CHECK(r.options.bench.url == "http://127.0.0.1:9");
  CHECK(r.options.bench.models == Args{"m1"});
  CHECK(r.options.bench.json);

  ParsedCommandLine bad = ParseCommandLine({"bench", "--runs", "x"});
  CHECK(bad.error.rfind("bench: ", 0) == 0);
  CHECK(ParseCommandLine({"--strict", "bench"}).error.find("must come first") != std::string::npos);
  CHECK(ParseCommandLine({"bench", "--help"}).options.command == Options::Command::kHelp);
  CHECK(UsageText().find("swapd bench [--config FILE | --url URL]") != std::string::npos);
}

TEST_CASE("bench options: --swap A,B pairs, each of two different models", "[unit][bench]") {
  ParsedBenchOptions parsed = ParseBenchOptions({"--swap", "a,b", "--swap=c,d", "--runs", "1"});
  REQUIRE(parsed.error.empty());
  const BenchOptions& o = parsed.options;
  REQUIRE(o.swaps.size() == 2);
  CHECK(o.swaps[1] == std::pair<std::string, std::string>{"c", "d"});
  CHECK(o.models.empty());
  CHECK(o.duos.empty());
  CHECK(ParseBenchOptions({"--swap", "a"}).error ==
        "bench: invalid value \"a\" for --swap: want two model ids, A,B");
  CHECK(ParseBenchOptions({"--swap", "a,a"}).error ==
        "bench: invalid value \"a,a\" for --swap: a swap is of two different models");
}

}  // namespace
}  // namespace swapd
