#include "daemon/cli.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

namespace swapd {
namespace {

// The flags swapd knows, by name without dashes. Value flags take the next argument or "=value";
// bool flags take nothing or "=true|false" (as Go's flag package does).
enum class Flag {
  kConfig,
  kConfigDir,
  kListen,
  kWatchConfig,
  kStrict,
  kLogLevel,
  kShutdownTimeout,
  kUpstreamIdleTimeout,
  kPeerCheckInterval,
  kContainment,
  kJson,
  kVersion,
  kHelp,
};

struct FlagSpec {
  std::string_view name;
  Flag flag;
  bool takes_value;
};

constexpr std::array<FlagSpec, 14> kFlags = {{
    {"config", Flag::kConfig, true},
    {"config-dir", Flag::kConfigDir, true},
    {"listen", Flag::kListen, true},
    {"watch-config", Flag::kWatchConfig, false},
    {"strict", Flag::kStrict, false},
    {"log-level", Flag::kLogLevel, true},
    {"shutdown-timeout", Flag::kShutdownTimeout, true},
    {"upstream-idle-timeout", Flag::kUpstreamIdleTimeout, true},
    {"peer-check-interval", Flag::kPeerCheckInterval, true},
    {"containment", Flag::kContainment, true},
    {"json", Flag::kJson, false},
    {"version", Flag::kVersion, false},
    {"help", Flag::kHelp, false},
    {"h", Flag::kHelp, false},
}};

const FlagSpec* FindFlag(std::string_view name) {
  for (const auto& spec : kFlags) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

// Go's strconv.ParseBool, which is what llama-swap's `-watch-config=false` goes through.
std::optional<bool> ParseBool(std::string_view s) {
  for (std::string_view t : {"1", "t", "T", "true", "TRUE", "True"}) {
    if (s == t) return true;
  }
  for (std::string_view f : {"0", "f", "F", "false", "FALSE", "False"}) {
    if (s == f) return false;
  }
  return std::nullopt;
}

bool IsHostName(std::string_view host) {
  if (host.size() > 253) return false;
  size_t label = 0;
  for (char c : host) {
    if (c == '.') {
      if (label == 0) return false;
      label = 0;
      continue;
    }
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
    if (++label > 63) return false;
  }
  return label > 0;
}

bool LooksNumeric(std::string_view host) {
  return std::all_of(host.begin(), host.end(), [](char c) {
    return c == '.' || std::isdigit(static_cast<unsigned char>(c));
  });
}

Status BadListen(std::string_view text, std::string_view why) {
  return Status::Error(ErrorCode::kInvalidArgument,
                       "bad listen address \"" + std::string(text) + "\": " + std::string(why));
}

std::string_view StripDashes(std::string_view arg) {
  arg.remove_prefix(1);
  if (!arg.empty() && arg.front() == '-') arg.remove_prefix(1);
  return arg;
}

}  // namespace

std::string ListenAddress::ToString() const {
  std::string port_text = std::to_string(port);
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + port_text;
  return host + ":" + port_text;
}

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  ListenAddress address;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return BadListen(text, "missing ']' after IPv6 address");
    address.host = std::string(text.substr(1, close - 1));
    std::string_view rest = text.substr(close + 1);
    if (rest.empty() || rest.front() != ':') {
      return BadListen(text, "expected HOST:PORT, e.g. [::1]:8080");
    }
    port = rest.substr(1);
    in6_addr v6;
    if (inet_pton(AF_INET6, address.host.c_str(), &v6) != 1) {
      return BadListen(text, "\"" + address.host + "\" is not an IPv6 address");
    }
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      return BadListen(text, "expected HOST:PORT, e.g. 127.0.0.1:8080");
    }
    std::string_view host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return BadListen(text, "an IPv6 address needs brackets, e.g. [::1]:8080");
    }
    // llama-swap's ":8080" means every interface.
    address.host = host.empty() ? "0.0.0.0" : std::string(host);
    in_addr v4;
    if (LooksNumeric(address.host)) {
      if (inet_pton(AF_INET, address.host.c_str(), &v4) != 1) {
        return BadListen(text, "\"" + address.host + "\" is not an IPv4 address");
      }
    } else if (!IsHostName(address.host)) {
      return BadListen(text, "\"" + address.host + "\" is not a host name");
    }
  }
  if (port.empty() || port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      })) {
    return BadListen(text, "the port must be a number from 0 to 65535");
  }
  address.port = std::stoi(std::string(port));
  if (address.port > 65535) {
    return BadListen(text, "the port must be a number from 0 to 65535");
  }
  return address;
}

ParsedCommandLine ParseCommandLine(const std::vector<std::string>& args) {
  ParsedCommandLine r;
  Options& o = r.options;
  auto fail = [&r](std::string message) {
    r.error = std::move(message);
    return r;
  };
  bool seen_command = false;
  bool only_positional = false;  // after "--"
  bool version = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (only_positional || arg.size() < 2 || arg.front() != '-') {
      if (arg == "bench" && i == 0) {
        ParsedBenchOptions bench = ParseBenchOptions({args.begin() + 1, args.end()});
        if (!bench.error.empty()) return fail(bench.error);
        o.command = bench.help ? Options::Command::kHelp : Options::Command::kBench;
        o.bench = std::move(bench.options);
        return r;
      }
      if (arg == "bench") return fail("\"bench\" must come first: swapd bench [flags]");
      if (arg == "check" && !seen_command) {
        o.command = Options::Command::kCheck;
        seen_command = true;
        continue;
      }
      return fail("unexpected argument \"" + arg + "\"");
    }
    if (arg == "--") {
      only_positional = true;
      continue;
    }
    std::string_view body = StripDashes(arg);
    std::string_view name = body;
    std::optional<std::string> value;
    if (size_t eq = body.find('='); eq != std::string_view::npos) {
      name = body.substr(0, eq);
      value = std::string(body.substr(eq + 1));
    }
    if (name.empty() || name.front() == '-' || name.front() == '=') {
      return fail("bad flag syntax: " + arg);
    }
    std::string shown = arg.substr(0, arg.size() - body.size()) + std::string(name);
    const FlagSpec* spec = FindFlag(name);
    if (spec == nullptr) return fail("unknown flag " + shown);

    bool on = true;
    if (spec->takes_value) {
      if (!value) {
        // A following flag is not taken as the value: `--config --strict` is a missing value.
        if (i + 1 >= args.size() || (args[i + 1].size() > 1 && args[i + 1].front() == '-')) {
          return fail("missing value for " + shown);
        }
        value = args[++i];
      }
      if (value->empty()) return fail("missing value for " + shown);
    } else if (value) {
      std::optional<bool> parsed = ParseBool(*value);
      if (!parsed)
        return fail("invalid value \"" + *value + "\" for " + shown + ": want true or false");
      on = *parsed;
    }

    switch (spec->flag) {
      case Flag::kConfig:
        o.config_path = *value;
        break;
      case Flag::kConfigDir:
        o.config_dir = *value;
        break;
      case Flag::kListen: {
        Result<ListenAddress> address = ParseListenAddress(*value);
        if (!address.ok()) return fail(address.status().message());
        o.listen = std::move(address).value();
        break;
      }
      case Flag::kWatchConfig:
        o.watch_config = on;
        break;
      case Flag::kStrict:
        o.strict = on;
        break;
      case Flag::kLogLevel:
        if (*value != "debug" && *value != "info" && *value != "warn" && *value != "error") {
          return fail("invalid value \"" + *value + "\" for " + shown +
                      ": want debug, info, warn or error");
        }
        o.log_level = *value;
        break;
      case Flag::kContainment: {
        std::optional<ContainmentMode> mode = ParseContainmentMode(*value);
        if (!mode) {
          return fail("invalid value \"" + *value + "\" for " + shown +
                      ": want auto, cgroup or marker");
        }
        o.containment = *mode;
        break;
      }
      case Flag::kShutdownTimeout:
      case Flag::kUpstreamIdleTimeout:
      case Flag::kPeerCheckInterval: {
        const bool digits = !value->empty() && value->size() <= 6 &&
                            std::all_of(value->begin(), value->end(), [](char c) {
                              return std::isdigit(static_cast<unsigned char>(c));
                            });
        if (!digits) {
          return fail("invalid value \"" + *value + "\" for " + shown + ": want whole seconds");
        }
        const std::chrono::seconds seconds(std::stoi(*value));
        if (spec->flag == Flag::kShutdownTimeout) {
          o.shutdown_timeout = seconds;
        } else if (seconds.count() < 1) {
          return fail("invalid value \"" + *value + "\" for " + shown + ": want at least 1");
        } else if (spec->flag == Flag::kPeerCheckInterval) {
          o.peer_check_interval = seconds;
        } else {
          o.upstream_idle_timeout = seconds;
        }
        break;
      }
      case Flag::kJson:
        o.json = on;
        break;
      case Flag::kVersion:
        version = on;
        break;
      case Flag::kHelp:
        // Like Go's flag package: help wins over whatever follows.
        if (on) {
          o.command = Options::Command::kHelp;
          return r;
        }
        break;
    }
  }
  if (version) {
    o.command = Options::Command::kVersion;
    return r;
  }
  if (o.json && o.command != Options::Command::kCheck) {
    return fail("--json is only valid with \"swapd check\"");
  }
  if (o.config_path.empty() && o.config_dir.empty()) o.config_path = "config.yaml";
  return r;
}

std::string UsageText() {
  return R"(usage: swapd [flags]               run the daemon
       swapd check [flags] [--json]  validate the configuration and print it
       swapd bench [bench flags]     benchmark models: the scoreboard (see below)
       swapd --version | --help

swapd puts one OpenAI-compatible endpoint in front of many local model servers and starts,
stops and swaps them on demand. A llama-swap config.yaml runs unchanged.

flags:
  --config FILE      the YAML configuration (default "config.yaml" unless --config-dir is given)
  --config-dir DIR   also load every *.yaml / *.yml in DIR, sorted, merged after --config
  --listen HOST:PORT address to serve on (default 127.0.0.1:8080); "[::1]:8080" for IPv6;
                     ":8080" means every interface (0.0.0.0), as with llama-swap;
                     port 0 lets the system pick a free port (logged at start)
  --watch-config     reload when the config file (or a file in --config-dir) changes;
                     SIGHUP and POST /api/config/reload reload too
  --shutdown-timeout SECONDS
                     on SIGTERM/SIGINT, how long in-flight requests may still run
                     before the backends are stopped anyway (default 30)
  --upstream-idle-timeout SECONDS
                     a backend that sends nothing for this long (before its first byte or
                     between two) fails the request: 502, or an error event ending a stream
                     (default )" +
         std::to_string(kDefaultUpstreamIdleTimeout.count()) +
         R"(: a CPU model may process a long prompt for many minutes)
  --peer-check-interval SECONDS
                     how often each peer's /v1/models is asked while it answers; a peer
                     that does not is asked less often, up to every 60 s (default 5)
  --containment MODE how every process a backend starts is kept with its model, so that a
                     stop, and swapd's death, ends all of them: auto (a cgroup v2 group per
                     run where swapd may create one, else environment markers), cgroup
                     (required: a backend does not start without it), marker (default auto)
  --strict           unknown configuration keys are errors instead of warnings
  --log-level LEVEL  debug, info, warn or error (default: the config's logLevel)
  --json             (check only) print diagnostics and configuration as one JSON document
  --version          print the version and exit
  -h, --help         print this help and exit

Every flag may be written with one or two dashes (llama-swap's -config, -listen, -watch-config,
-config-dir and -version keep working), and as --flag VALUE or --flag=VALUE.

swapd check prints every error, warning and hint as file:line:col, then the effective
configuration: globals, groups, and per model its argv, environment, proxy, port and timeouts.
--listen, --watch-config and --log-level are accepted by check and ignored, so a service's
flags can be checked as they are.

exit status: 0 ok; 1 invalid configuration or runtime failure; 2 usage error.

)" + BenchUsageText();
}

std::string VersionText() { return std::string("swapd ") + SWAPD_VERSION; }

}  // namespace swapd
