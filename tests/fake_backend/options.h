// Command-line options of fake-llama-server, the llama-server imitation used by the integration
// tests and the README demo. Parsing is pure (no I/O) so that every llama-server flag the fake does
// not know is skipped the same way on every call. Plain value types; not synchronized.
#pragma once

#include <string>
#include <vector>

namespace fake_backend {

struct Options {
  // llama-server flags that the fake honours.
  std::string host = "127.0.0.1";
  int port = 8080;  // 0 = an ephemeral port, announced on stdout
  std::string model = "fake-model";
  std::string alias;
  int ctx_size = 4096;
  int default_n_predict = 16;  // -n / --n-predict; a request's max_tokens wins
  int http_threads = 192;      // --threads-http; ~100 concurrent streams plus idle keep-alives
  int n_parallel = 1;          // -np / --parallel: slots
  std::string slot_save_path;  // --slot-save-path: enables POST /slots/{id}?action=save|restore

  // Behaviour switches of the fake.
  int load_ms = 0;                 // /health answers 503 this long after listening
  double tokens_per_second = 0.0;  // 0 = as fast as possible
  bool bad_json = false;  // a prompt asking for JSON gets a document missing its last bracket
  std::string reply;      // not empty: every answer is this text (cut at max_tokens words)
  bool close_kept_connections = false;  // a second request on a connection is not answered
  int log_lines = 0;                    // llama-server-like load lines printed at start-up
  bool quiet_load = false;    // no llama-server-like progress output during --load-ms (as vLLM)
  bool log_2026 = false;      // the load output of a 2026 llama-server (time and level prefix)
  bool never_ready = false;   // /health stays 503
  int exit_during_load = -1;  // >= 0: exit with this code before loading finishes
  int crash_after = 0;        // > 0: _exit(3) on this inference request (mid-stream if streamed)
  bool ignore_sigterm = false;
  bool spawn_grandchild = false;  // fork a sleeper that holds stdout/stderr, same process group
  int slot_save_ms = 0;           // a slot save takes this long
  bool slot_save_fail = false;    // a slot save answers 500
  int slot_bytes_per_token = 0;   // padding per token in a saved slot file (its size)
  int hang_mid_stream = 0;        // > 0: a stream sends this many events, then nothing (kept open)
  bool garbage_response = false;  // model routes: non-HTTP bytes on the socket, then close
  bool close_without_response = false;  // model routes: close the connection, no bytes
  int alloc_mb = 0;  // MiB allocated and touched at start-up, held for the process lifetime
  // --weights FILE: read whole during the load, as a backend reads its weights (a .gguf path is
  // one of the model files swapd finds in a cmd; the read goes through the page cache).
  std::string weights;
  int vram_mb = 0;  // only shown in argv, where tests/support/fake-nvidia-smi reads it

  // The id that /v1/models lists and responses fall back to: the alias if set, else the model.
  const std::string& ModelId() const { return alias.empty() ? model : alias; }
};

struct ParseResult {
  Options options;
  bool show_help = false;
  std::string error;                 // empty when the command line is valid
  std::vector<std::string> ignored;  // unknown flags (and values) that were skipped
};

// Parses argv[1..]. Unknown flags are skipped: a following token that does not start with '-' is
// taken as that flag's value (so "-ngl 99 --jinja" skips both flags and the 99).
ParseResult ParseOptions(const std::vector<std::string>& args);

// The text printed for --help.
std::string Usage();

}  // namespace fake_backend
