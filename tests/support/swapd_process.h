// A real swapd for integration tests: writes a config to a fresh temporary directory, starts the
// `swapd` binary on 127.0.0.1 with an ephemeral port, and learns the port from its "listening on"
// log line. Also the small helpers those tests share: a free loopback port for a backend, the
// fake backend's command line, and a streaming client that records chunks as they arrive.
// Thread safe in the way Subprocess is; StreamingCall is one request on its own connection.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/port_check.h"
#include "base/status.h"
#include "tests/support/child_process.h"

namespace swapd::testing {

struct SwapdInstance {
  std::unique_ptr<Subprocess> process;
  std::string base_url;  // "http://127.0.0.1:PORT"
  int port = 0;          // the port swapd listens on
  std::string dir;       // the temporary directory holding config.yaml
  std::string config_path;
};

// Starts swapd with `yaml` as its config, plus `args`. Waits up to `timeout` for it to listen.
// Its history store defaults to swapd.db in the temporary directory (STATE_DIRECTORY). `wrapper`,
// when given, is the command line swapd's own is appended to (e.g. a shell that moves itself
// into a cgroup and then execs "$@").
Result<SwapdInstance> StartSwapd(const std::string& yaml, const std::vector<std::string>& args = {},
                                 const std::vector<std::string>& env = {},
                                 std::chrono::milliseconds timeout = std::chrono::seconds(20),
                                 const std::vector<std::string>& wrapper = {});

// Replaces the config file the way editors do: a new file renamed over the old one. False when
// it could not be written.
bool RewriteConfig(const SwapdInstance& swapd, const std::string& yaml);

// A loopback TCP port that was free a moment ago (the OS picked it), for a backend's --port.
using ::swapd::FreeLoopbackPort;

// A config model entry running the fake backend on `port`: cmd, proxy and checkEndpoint lines,
// indented for a model under `models:` (6 spaces). `flags` are extra fake-backend flags.
std::string FakeModelYaml(const std::string& id, int port, const std::string& flags = "",
                          const std::string& extra_yaml = "");

// Process ids whose command line contains `needle` (scans /proc), e.g. a model's --model value.
std::vector<int> PidsWithArg(const std::string& needle);

// True once no process's command line contains `needle`, looked at until `timeout`. Under ASan a
// stopped backend has been seen listed in /proc for a moment after swapd reported it stopped (and
// once after swapd itself had exited); a real leftover stays far longer.
bool NoneWithArgWithin(const std::string& needle,
                       std::chrono::milliseconds timeout = std::chrono::seconds(10));

// True when the process is gone or a zombie: it has exited and every file it had open (its
// sockets too) is closed. (A container's pid 1 may never reap orphans.)
bool ProcessGone(int pid);

// One request whose response body is read chunk by chunk as it arrives.
struct StreamedReply {
  int status = -1;
  std::string content_type;
  std::vector<std::string> chunks;
  std::string body;  // all chunks joined
  std::string error;
};
// POSTs `body`; `on_chunk` (optional) may return false to hang up mid-stream.
StreamedReply StreamPost(const std::string& base_url, const std::string& path,
                         const std::string& body,
                         std::function<bool(const std::string& chunk)> on_chunk = nullptr,
                         const std::vector<std::pair<std::string, std::string>>& headers = {});

// `n` chat request bodies are easy to get wrong in a test; this one is right.
std::string ChatBody(const std::string& model, bool stream, int max_tokens = 8,
                     const std::string& prompt = "hello there");

// The status of a non-streamed chat completion for `model` at `url` (a minute to answer).
int ChatStatus(const std::string& url, const std::string& model);

}  // namespace swapd::testing
