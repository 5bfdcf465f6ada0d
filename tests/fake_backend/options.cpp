#include "tests/fake_backend/options.h"

#include <charconv>
#include <functional>
#include <string_view>

namespace fake_backend {
namespace {

bool ParseInt(std::string_view text, int* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

bool ParseDouble(const std::string& text, double* out) {
  try {
    size_t used = 0;
    *out = std::stod(text, &used);
    return used == text.size();
  } catch (const std::exception&) {
    return false;
  }
}

// A flag the fake understands. A null `set` marks a switch that takes no value.
struct Flag {
  std::vector<std::string_view> names;
  std::function<bool(Options&, const std::string&)> set;
  std::function<void(Options&)> enable;
};

std::vector<Flag> KnownFlags() {
  auto int_flag = [](int Options::*field) {
    return [field](Options& o, const std::string& v) { return ParseInt(v, &(o.*field)); };
  };
  auto string_flag = [](std::string Options::*field) {
    return [field](Options& o, const std::string& v) {
      o.*field = v;
      return true;
    };
  };
  return {
      {{"--host"}, string_flag(&Options::host), nullptr},
      {{"--port"}, int_flag(&Options::port), nullptr},
      {{"-m", "--model"}, string_flag(&Options::model), nullptr},
      {{"-a", "--alias"}, string_flag(&Options::alias), nullptr},
      {{"-c", "--ctx-size"}, int_flag(&Options::ctx_size), nullptr},
      {{"-n", "--n-predict"}, int_flag(&Options::default_n_predict), nullptr},
      {{"--threads-http"}, int_flag(&Options::http_threads), nullptr},
      {{"-np", "--parallel"}, int_flag(&Options::n_parallel), nullptr},
      {{"--slot-save-path"}, string_flag(&Options::slot_save_path), nullptr},
      {{"--slot-save-ms"}, int_flag(&Options::slot_save_ms), nullptr},
      {{"--slot-save-fail"}, nullptr, [](Options& o) { o.slot_save_fail = true; }},
      {{"--slot-bytes-per-token"}, int_flag(&Options::slot_bytes_per_token), nullptr},
      {{"--load-ms"}, int_flag(&Options::load_ms), nullptr},
      {{"--tokens-per-second"},
       [](Options& o, const std::string& v) { return ParseDouble(v, &o.tokens_per_second); },
       nullptr},
      {{"--log-lines"}, int_flag(&Options::log_lines), nullptr},
      {{"--exit-during-load"}, int_flag(&Options::exit_during_load), nullptr},
      {{"--crash-after"}, int_flag(&Options::crash_after), nullptr},
      {{"--bad-json"}, nullptr, [](Options& o) { o.bad_json = true; }},
      {{"--reply"}, string_flag(&Options::reply), nullptr},
      {{"--never-ready"}, nullptr, [](Options& o) { o.never_ready = true; }},
      {{"--quiet-load"}, nullptr, [](Options& o) { o.quiet_load = true; }},
      {{"--log-2026"}, nullptr, [](Options& o) { o.log_2026 = true; }},
      {{"--ignore-sigterm"}, nullptr, [](Options& o) { o.ignore_sigterm = true; }},
      {{"--spawn-grandchild"}, nullptr, [](Options& o) { o.spawn_grandchild = true; }},
      {{"--hang-mid-stream"}, int_flag(&Options::hang_mid_stream), nullptr},
      {{"--garbage-response"}, nullptr, [](Options& o) { o.garbage_response = true; }},
      {{"--close-without-response"}, nullptr, [](Options& o) { o.close_without_response = true; }},
      {{"--close-kept-connections"}, nullptr, [](Options& o) { o.close_kept_connections = true; }},
      {{"--alloc-mb"}, int_flag(&Options::alloc_mb), nullptr},
      {{"--vram-mb"}, int_flag(&Options::vram_mb), nullptr},
      {{"--weights"}, string_flag(&Options::weights), nullptr},
  };
}

const Flag* FindFlag(const std::vector<Flag>& flags, std::string_view name) {
  for (const Flag& flag : flags) {
    for (std::string_view n : flag.names) {
      if (n == name) return &flag;
    }
  }
  return nullptr;
}

std::string CheckRanges(const Options& o) {
  if (o.port < 0 || o.port > 65535) return "--port must be in 0..65535";
  if (o.load_ms < 0) return "--load-ms must be >= 0";
  if (o.tokens_per_second < 0) return "--tokens-per-second must be >= 0";
  if (o.log_lines < 0) return "--log-lines must be >= 0";
  if (o.crash_after < 0) return "--crash-after must be >= 0";
  if (o.hang_mid_stream < 0) return "--hang-mid-stream must be >= 0";
  if (o.garbage_response && o.close_without_response) {
    return "--garbage-response and --close-without-response exclude each other";
  }
  if (o.exit_during_load > 255) return "--exit-during-load must be in 0..255";
  if (o.http_threads < 1) return "--threads-http must be >= 1";
  if (o.ctx_size < 0) return "--ctx-size must be >= 0";
  if (o.n_parallel < 1 || o.n_parallel > 256) return "--parallel must be in 1..256";
  if (o.slot_save_ms < 0) return "--slot-save-ms must be >= 0";
  if (o.slot_bytes_per_token < 0 || o.slot_bytes_per_token > (1 << 20)) {
    return "--slot-bytes-per-token must be in 0..1048576";
  }
  if (o.alloc_mb < 0 || o.alloc_mb > 65536) return "--alloc-mb must be in 0..65536";
  if (o.vram_mb < 0) return "--vram-mb must be >= 0";
  return "";
}

}  // namespace

ParseResult ParseOptions(const std::vector<std::string>& args) {
  ParseResult result;
  const std::vector<Flag> flags = KnownFlags();
  for (size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::string inline_value;
    bool has_inline_value = false;
    if (name.rfind("--", 0) == 0) {
      if (size_t eq = name.find('='); eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_inline_value = true;
      }
    }
    if (name == "-h" || name == "--help") {
      result.show_help = true;
      continue;
    }
    const Flag* flag = FindFlag(flags, name);
    if (flag == nullptr) {
      // Unknown llama-server flag: skip it, and its value when the next token looks like one.
      result.ignored.push_back(args[i]);
      if (!has_inline_value && name.rfind("-", 0) == 0 && i + 1 < args.size() &&
          args[i + 1].rfind("-", 0) != 0) {
        result.ignored.push_back(args[++i]);
      }
      continue;
    }
    if (!flag->set) {
      flag->enable(result.options);
      continue;
    }
    // A known flag always takes the next token, even "-1".
    std::string value;
    if (has_inline_value) {
      value = inline_value;
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      result.error = "error: " + name + " needs a value";
      return result;
    }
    if (!flag->set(result.options, value)) {
      result.error = "error: invalid value '" + value + "' for " + name;
      return result;
    }
  }
  result.error = CheckRanges(result.options);
  return result;
}

std::string Usage() {
  return R"(usage: fake-llama-server [options]   (imitates llama.cpp's llama-server)
  --host H                listen address (default 127.0.0.1)
  --port N                listen port (default 8080; 0 = ephemeral); prints
                          "listening on http://H:PORT" once listening
  -m, --model NAME        model id to report (default fake-model)
  -a, --alias A           id reported instead of the model
  -c, --ctx-size N        context size reported by /props (default 4096)
  -n, --n-predict N       tokens generated when a request sets no max_tokens (default 16)
  --threads-http N        HTTP worker threads (default 192)
  -np, --parallel N       slots, each with its own prompt cache (default 1)
  --slot-save-path DIR    enable slot save/restore to files in DIR
  --load-ms N             /health answers 503 for N ms, then 200 (default 0); meanwhile prints
                          llama-server's load output spread over it: metadata, load_tensors,
                          one '.' per percent on a line ended at 100%, context, warm-up
  --quiet-load            print none of that load output (a server swapd cannot parse)
  --log-2026              the load output of a 2026 llama-server at its default verbosity
                          instead: each line after a time and a level ("0.00.071.357 I "), only
                          "loading model", "initializing" (both over --load-ms) and "model loaded"
  --tokens-per-second X   pace generation (default 0 = as fast as possible)
  --log-lines N           print N llama-server-like load lines at start-up
  --bad-json              a prompt containing "JSON" gets its JSON document without the last
                          closing bracket (invalid), for `swapd bench`'s quality gates
  --reply TEXT            every answer is TEXT, one word a token (cut at max_tokens); any bytes,
                          as a random model's (swapd's config passes them through)
  --never-ready           /health stays 503
  --exit-during-load C    exit with code C before loading finishes
  --crash-after N         _exit(3) on the N-th inference request (mid-stream if streamed)
  --ignore-sigterm        ignore SIGTERM (SIGKILL still works)
  --spawn-grandchild      fork a child that holds stdout/stderr open (same process group)
  --slot-save-ms N        a slot save takes N ms
  --slot-save-fail        a slot save answers HTTP 500
  --slot-bytes-per-token N  pad saved slot files to about N bytes per token
  --hang-mid-stream N     a stream sends N events, then nothing more, its connection kept open
  --garbage-response      model routes write non-HTTP bytes on the socket and close it
  --close-without-response  model routes close the connection without sending a byte
  --close-kept-connections  a model request on a connection that carried a request before is not
                          answered: the connection is shut down (real llama-server closes its
                          connection after every streamed answer, a moment after the last chunk)
  --alloc-mb N            allocate N MiB at start-up and touch every page (RSS grows by N MiB)
  --vram-mb N             no effect; tests/support/fake-nvidia-smi reports N MiB of GPU memory
                          for a process with this in its command line
  --weights FILE          read FILE whole during the load, as a backend reads its weights
Any other flag is ignored, with its value if the next token does not start with '-'.
)";
}

}  // namespace fake_backend
