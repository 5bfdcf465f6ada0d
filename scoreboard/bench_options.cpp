#include "scoreboard/bench_options.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>

namespace swapd {
namespace {

constexpr int kMaxRuns = 1000;
constexpr int kMaxTokens = 1000000;

// Flags without a value.
bool IsSwitch(std::string_view name) {
  return name == "json" || name == "no-gates" || name == "strict" || name == "compare" ||
         name == "help" || name == "h";
}

bool TakesValue(std::string_view name) {
  for (std::string_view known :
       {"config", "url", "duo", "swap", "compare-router", "runs", "prompt-tokens", "gen-tokens",
        "markdown", "gates", "store", "api-key", "output-dir", "noise-cpu", "noise-disk",
        "noise-cache"}) {
    if (name == known) return true;
  }
  return false;
}

std::optional<int> WholeNumber(const std::string& text, int min, int max) {
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < min || value > max) {
    return std::nullopt;
  }
  return value;
}

std::optional<double> NonNegative(const std::string& text) {
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(value) || value < 0) {
    return std::nullopt;
  }
  return value;
}

// Applies one flag with its value (empty for a switch). Returns an error message or "".
std::string Apply(std::string_view name, const std::string& shown, const std::string& value,
                  BenchOptions& o) {
  auto invalid = [&](const std::string& want) {
    return "invalid value \"" + value + "\" for " + shown + ": " + want;
  };
  if (name == "json") {
    o.json = true;
  } else if (name == "no-gates") {
    o.gates = false;
  } else if (name == "strict") {
    o.strict = true;
  } else if (name == "compare") {
    o.compare = true;
  } else if (name == "config") {
    o.config_path = value;
  } else if (name == "url") {
    if (value.rfind("http://", 0) != 0 || value.size() <= 7) {
      return invalid("want http://HOST:PORT (https is not supported)");
    }
    o.url = value;
    while (o.url.size() > 7 && o.url.back() == '/') o.url.pop_back();
  } else if (name == "duo" || name == "swap") {
    const size_t comma = value.find(',');
    if (comma == std::string::npos || comma == 0 || comma + 1 == value.size() ||
        value.find(',', comma + 1) != std::string::npos) {
      return invalid("want two model ids, A,B");
    }
    std::string a = value.substr(0, comma), b = value.substr(comma + 1);
    if (a == b) return invalid("a " + std::string(name) + " is of two different models");
    (name == "duo" ? o.duos : o.swaps).emplace_back(std::move(a), std::move(b));
  } else if (name == "runs" || name == "prompt-tokens" || name == "gen-tokens") {
    const bool runs = name == "runs";
    std::optional<int> n = WholeNumber(value, 1, runs ? kMaxRuns : kMaxTokens);
    if (!n) {
      return invalid("want a whole number from 1 to " +
                     std::to_string(runs ? kMaxRuns : kMaxTokens));
    }
    (runs ? o.runs : name == "prompt-tokens" ? o.prompt_tokens : o.gen_tokens) = *n;
  } else if (name == "compare-router") {
    o.compare_router = value;
  } else if (name == "markdown") {
    o.markdown_path = value;
  } else if (name == "gates") {
    o.gate_files.push_back(value);
  } else if (name == "store") {
    o.store = value;
  } else if (name == "api-key") {
    o.api_key = value;
  } else if (name == "output-dir") {
    o.output_dir = value;
  } else {  // noise-cpu, noise-disk, noise-cache
    std::optional<double> limit = NonNegative(value);
    if (!limit) return invalid("want a number >= 0");
    (name == "noise-cpu"    ? o.noise.other_cpu_cores
     : name == "noise-disk" ? o.noise.disk_mb_per_s
                            : o.noise.page_cache_mb_per_s) = *limit;
  }
  return "";
}

}  // namespace

ParsedBenchOptions ParseBenchOptions(const std::vector<std::string>& args) {
  ParsedBenchOptions r;
  BenchOptions& o = r.options;
  auto fail = [&r](std::string message) {
    r.error = "bench: " + std::move(message);
    return r;
  };
  bool only_models = false;  // after "--"
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (only_models || arg.size() < 2 || arg.front() != '-') {
      if (arg.empty()) return fail("empty model id");
      o.models.push_back(arg);
      continue;
    }
    if (arg == "--") {
      only_models = true;
      continue;
    }
    std::string_view body(arg);
    body.remove_prefix(body.size() > 1 && body[1] == '-' ? 2 : 1);
    std::string_view name = body;
    std::optional<std::string> value;
    if (size_t eq = body.find('='); eq != std::string_view::npos) {
      name = body.substr(0, eq);
      value = std::string(body.substr(eq + 1));
    }
    const std::string shown = arg.substr(0, arg.size() - body.size()) + std::string(name);
    if (IsSwitch(name)) {
      if (value) return fail(shown + " takes no value");
      if (name == "help" || name == "h") {
        r.help = true;
        return r;
      }
      Apply(name, shown, "", o);
      continue;
    }
    if (!TakesValue(name)) return fail("unknown flag " + shown);
    if (!value) {
      // A following flag is not taken as the value: `--store --json` is a missing value.
      if (i + 1 >= args.size() || (args[i + 1].size() > 1 && args[i + 1].front() == '-')) {
        return fail("missing value for " + shown);
      }
      value = args[++i];
    }
    if (value->empty()) return fail("missing value for " + shown);
    if (std::string error = Apply(name, shown, *value, o); !error.empty()) return fail(error);
  }
  if (!o.config_path.empty() && !o.url.empty()) {
    return fail("--config and --url exclude each other: bench a swapd it starts, or a running one");
  }
  if (!o.compare_router.empty() && (o.swaps.empty() || o.config_path.empty())) {
    return fail(
        "--compare-router needs --swap A,B and --config FILE (the router is given the "
        "models' command lines)");
  }
  if (o.config_path.empty() && o.url.empty()) o.url = kDefaultBenchUrl;
  return r;
}

std::string BenchUsageText() {
  return R"(swapd bench [--config FILE | --url URL] [MODEL...] [flags]
  Benchmarks models through swapd like any client: per model its load time, prefill and decode
  tokens/s, time to first token (medians over the runs), and quality gates at temperature 0.
  Prints a markdown scoreboard (or JSON) and stores the rows for --compare.
  --config FILE      start a swapd of our own from FILE on a free loopback port (stopped at the end)
  --url URL          bench the swapd at URL (default http://127.0.0.1:8080 without --config)
  MODEL...           the model ids to bench alone (default: every model GET /v1/models lists,
                     unless --duo or --swap is given)
  --duo A,B          load A and B together and hit both at once (repeatable); they must be
                     allowed to run together (a group with swap: false)
  --swap A,B         the swap between A and B, each way: with one loaded, time a request for the
                     other to its first token and its load, with its model files cold (dropped
                     from the page cache) and warm (read into it), and for a model with a slot
                     cache a 512-token conversation restored after the swap or not (repeatable;
                     swapd must run on this machine, where the files are)
  --compare-router PATH  the same swaps through llama.cpp's router mode too: PATH is a
                     llama-server, started with the swapped models as presets and --models-max 1
                     (needs --config)
  --runs N           measured runs per model, and swaps per direction and cache (default 3)
  --prompt-tokens N  the synthetic prompt's size, about N tokens (default 512)
  --gen-tokens N     tokens generated per run, max_tokens (default 128)
  --gates FILE       more quality gates from a YAML file (repeatable); --no-gates: run none
  --output-dir DIR   where a failed gate's answer is saved, and with --config the log of the
                     swapd it starts (default ./swapd-bench-out)
  --json             print {"machine", "rows"[, "previous"]} as JSON instead of the table
  --markdown FILE    also write the scoreboard to FILE
  --store PATH|none  the database the rows are kept in (default: the config's store.path, else
                     swapd's default store); none: keep nothing
  --compare          show the change against the previous stored run of each row
  --api-key KEY      sent as "Authorization: Bearer KEY" (when the swapd has apiKeys)
  --noise-cpu CORES  quiet-machine limits: CPU of other processes (default 0.5 cores),
  --noise-disk MBPS  disk reads+writes (default 20 MB/s) and page-cache churn
  --noise-cache MBPS (default 50 MB/s); over a limit the row is marked noisy
  --strict           a machine busy before a model's runs refuses that model (exit status 3)
  exit status: 0 every row measured and every gate passed; 1 a row failed or a gate failed;
  2 usage error; 3 refused (--strict and the machine was busy).
)";
}

}  // namespace swapd
