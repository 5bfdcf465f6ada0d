#include "tests/fake_backend/lifecycle.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "tests/fake_backend/log.h"

namespace fake_backend {
namespace {

using Clock = std::chrono::steady_clock;

void ExitOnSignal(int) {
  static const char kMessage[] = "srv    operator(): operator(): cleaning up before exit...\n";
  // Only async-signal-safe calls here.
  [[maybe_unused]] ssize_t n = ::write(STDOUT_FILENO, kMessage, sizeof(kMessage) - 1);
  ::_exit(0);
}

// Lines shaped like llama.cpp's model loader output.
void PrintLoadLines(const Options& options) {
  std::string batch;
  for (int i = 0; i < options.log_lines; ++i) {
    batch += "llama_model_loader: - kv " + std::to_string(i) + ": fake.key_" + std::to_string(i) +
             " str = " + options.model + " (fake load line " + std::to_string(i + 1) + " of " +
             std::to_string(options.log_lines) + ")\n";
    if (batch.size() >= 64 * 1024) {
      LogRaw(batch);
      batch.clear();
    }
  }
  LogRaw(batch);
}

// What llama-server prints while it loads, spread over --load-ms so that swapd's progress parser
// sees each stage in turn: the loader's metadata, the tensor loader's lines, one '.' per percent
// of tensor data on a line that ends only at 100%, the context's set-up and the warm-up run.
void ImitateLoad(const Options& options, Clock::time_point start) {
  auto at = [&](double share) {
    std::this_thread::sleep_until(
        start + std::chrono::microseconds(static_cast<int64_t>(options.load_ms * 1000.0 * share)));
  };
  LogLine("llama_model_loader: loaded meta data with 3 key-value pairs and 2 tensors from " +
          options.model + " (version GGUF V3 (latest))");
  LogLine("print_info: file format = GGUF V3 (latest)");
  at(0.10);
  LogLine("load_tensors: loading model tensors, this can take a while... (mmap = true)");
  LogLine("load_tensors:   CPU_Mapped model buffer size =   100.00 MiB");
  for (int percent = 1; percent <= 100; ++percent) {
    at(0.10 + 0.75 * percent / 100.0);
    LogRaw(percent == 100 ? ".\n" : ".");
  }
  LogLine("llama_context: constructing llama_context");
  LogLine("llama_context: n_ctx = 4096");
  at(0.92);
  LogLine(
      "common_init_from_params: warming up the model with an empty run - please wait ... "
      "(--no-warmup to disable)");
}

// A 2026 llama-server's line: the time since `start` as minutes.seconds.milliseconds.microseconds
// and a level letter before the text ("0.00.071.357 I srv  llama_server: model loaded").
void LogLine2026(Clock::time_point start, std::string_view text) {
  const auto us =
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
  char stamp[40];
  std::snprintf(stamp, sizeof stamp, "%lld.%02lld.%03lld.%03lld I ",
                static_cast<long long>(us / 60'000'000),
                static_cast<long long>(us / 1'000'000 % 60),
                static_cast<long long>(us / 1000 % 1000), static_cast<long long>(us % 1000));
  LogLine(stamp + std::string(text));
}

// What a 2026 llama-server prints while it loads, at its default verbosity: the load's start, the
// slots' set-up once the weights are in, spread over --load-ms; "model loaded" comes when ready.
void ImitateLoad2026(const Options& options, Clock::time_point start) {
  LogLine2026(start, "srv    load_model: loading model '" + options.model + "'");
  std::this_thread::sleep_until(start + std::chrono::milliseconds(options.load_ms * 6 / 10));
  LogLine2026(start,
              "srv    load_model: initializing, n_slots = " + std::to_string(options.n_parallel) +
                  ", n_ctx_slot = " + std::to_string(options.ctx_size));
}

// --weights: the file read whole, through the page cache (what is cached costs no disk read).
void ReadWeights(const Options& options) {
  if (options.weights.empty()) return;
  const int fd = ::open(options.weights.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    LogLine("llama_model_load: error loading model: cannot open " + options.weights);
    ::_exit(1);
  }
  std::vector<char> buffer(size_t{1} << 20);
  int64_t total = 0;
  for (ssize_t n; (n = ::read(fd, buffer.data(), buffer.size())) > 0;) total += n;
  ::close(fd);
  LogLine("llama_model_load: read " + std::to_string(total >> 20) + " MiB of weights from " +
          options.weights);
}

}  // namespace

void InstallSignalHandlers(const Options& options) {
  struct sigaction action = {};
  action.sa_handler = ExitOnSignal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  if (options.ignore_sigterm) {
    ::signal(SIGTERM, SIG_IGN);
  } else {
    ::sigaction(SIGTERM, &action, nullptr);
  }
  ::signal(SIGPIPE, SIG_IGN);
}

int SpawnGrandchild(const Options& options) {
  if (!options.spawn_grandchild) return -1;
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  // The grandchild: no setsid/setpgid, so a kill of the group reaches it. With --ignore-sigterm it
  // inherits SIG_IGN and only SIGKILL ends it, like a stubborn helper process would.
  for (int minute = 0; minute < 10; ++minute) ::sleep(60);
  ::_exit(0);
}

void AllocateMemory(const Options& options) {
  if (options.alloc_mb <= 0) return;
  const size_t bytes = static_cast<size_t>(options.alloc_mb) << 20;
  void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    LogLine("fake: --alloc-mb: mmap of " + std::to_string(options.alloc_mb) + " MiB failed");
    return;
  }
  // A write, not a read: a read of an untouched page maps the shared zero page. Never unmapped, so
  // the memory stays resident until exit.
  auto* bytes_ptr = static_cast<volatile unsigned char*>(memory);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  for (size_t offset = 0; offset < bytes; offset += page) bytes_ptr[offset] = 1;
  LogLine("fake: allocated " + std::to_string(options.alloc_mb) + " MiB");
}

void LoadModel(const Options& options, const std::function<void()>& on_ready) {
  const Clock::time_point start = Clock::now();
  if (!options.log_2026) {
    LogLine("main: loading model");
    PrintLoadLines(options);
  }
  if (options.exit_during_load >= 0) {
    std::this_thread::sleep_until(start + std::chrono::milliseconds(options.load_ms / 2));
    LogLine("llama_model_load: error loading model: fake failure (--exit-during-load)");
    LogLine("main: exiting due to model loading error");
    ::_exit(options.exit_during_load);
  }
  ReadWeights(options);
  if (options.load_ms > 0 && !options.never_ready && !options.quiet_load) {
    options.log_2026 ? ImitateLoad2026(options, start) : ImitateLoad(options, start);
  }
  std::this_thread::sleep_until(start + std::chrono::milliseconds(options.load_ms));
  if (options.never_ready) {
    LogLine("main: --never-ready: the model stays loading");
    return;
  }
  on_ready();
  if (options.log_2026) {
    LogLine2026(start, "srv  llama_server: model loaded");
    return;
  }
  LogLine("main: model loaded");
  LogLine("srv  update_slots: all slots are idle");
}

}  // namespace fake_backend
