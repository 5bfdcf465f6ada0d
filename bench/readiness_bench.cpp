// readiness-bench: how long after a backend is ready does swapd notice, and what does a stop
// cost? Starts the fake llama-server N times through ProcessBackend with --load-ms L. A separate
// tight poller (GET /health every ~1 ms) marks the moment T the backend became ready; swapd's
// Start() returning at T+x gives the detection latency x. Two modes: the backend's output visible
// (swapd probes at once when the backend prints, as llama-server does when its model is loaded)
// and silenced (output to /dev/null: the poll schedule alone). Then the time Stop() takes for a
// backend that obeys SIGTERM: the fake (192 HTTP threads to tear down) and /bin/sleep (whose exit
// costs nothing, so the time is swapd's own: signal, exit noticed, reaped, monitor joined). Results
// are for bench/README.md, section "Backend readiness". Usage: readiness-bench FAKE_BACKEND_BINARY
// [runs=50] [load_ms=500]
#include <httplib.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "backends/port_check.h"
#include "backends/process_backend.h"

namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

struct Stats {
  double median, p95, min, max;
};

Stats Summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  size_t p95 = std::min(n - 1, static_cast<size_t>((95 * n + 99) / 100) - 1);
  return {v[n / 2], v[p95], v.front(), v.back()};
}

struct Run {
  double detect_ms = 0;  // Start() returned this long after the backend was ready
  double stop_ms = 0;    // Stop() took this long
  bool ok = false;
};

Run OneRun(const std::string& fake, int load_ms, bool silent) {
  const int port = swapd::FreeLoopbackPort();
  swapd::ModelConfig model;
  model.id = "bench";
  std::vector<std::string> fake_argv = {fake, "--port", std::to_string(port), "--load-ms",
                                        std::to_string(load_ms)};
  if (silent) {
    model.argv = {"/bin/sh", "-c", "exec \"$0\" \"$@\" >/dev/null 2>&1"};
    model.argv.insert(model.argv.end(), fake_argv.begin(), fake_argv.end());
  } else {
    model.argv = fake_argv;
  }
  model.proxy = "http://127.0.0.1:" + std::to_string(port);
  swapd::Config config;
  config.health_check_timeout = std::chrono::seconds(60);
  swapd::ProcessBackend backend(model, config);

  std::atomic<bool> give_up{false};
  Clock::time_point ready_at{};
  std::thread poller([&] {
    httplib::Client client(model.proxy);
    client.set_connection_timeout(std::chrono::milliseconds(200));
    while (!give_up) {
      auto res = client.Get("/health");
      if (res && res->status == 200) {
        ready_at = Clock::now();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  swapd::Status started = backend.Start();
  const auto noticed = Clock::now();
  if (!started.ok()) give_up = true;
  poller.join();
  Run run;
  run.ok = started.ok();
  run.detect_ms = Ms(noticed - ready_at);
  const auto stop_begin = Clock::now();
  backend.Stop();
  run.stop_ms = Ms(Clock::now() - stop_begin);
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: readiness-bench FAKE_BACKEND_BINARY [runs=50] [load_ms=500]\n");
    return 2;
  }
  const std::string fake = argv[1];
  const int runs = argc > 2 ? std::stoi(argv[2]) : 50;
  const int load_ms = argc > 3 ? std::stoi(argv[3]) : 500;
  spdlog::set_level(spdlog::level::warn);
  for (bool silent : {false, true}) {
    std::vector<double> detect, stop;
    for (int i = 0; i < runs; ++i) {
      Run run = OneRun(fake, load_ms, silent);
      if (!run.ok) {
        std::fprintf(stderr, "run %d failed to start\n", i);
        return 1;
      }
      detect.push_back(run.detect_ms);
      stop.push_back(run.stop_ms);
    }
    Stats d = Summarize(detect), s = Summarize(stop);
    std::printf(
        "%-34s runs=%d load=%dms  detect median %.1f ms  p95 %.1f ms  (min %.1f, max %.1f)\n",
        silent ? "output silenced (poll schedule):" : "output visible (default):", runs, load_ms,
        d.median, d.p95, d.min, d.max);
    std::printf("%-34s stop (SIGTERM obeyed)  median %.1f ms  p95 %.1f ms  (min %.1f, max %.1f)\n",
                "", s.median, s.p95, s.min, s.max);
  }
  // Stop of the smallest possible backend (sleep dies at SIGTERM at once): swapd's own share.
  std::vector<double> stop;
  for (int i = 0; i < runs; ++i) {
    swapd::ModelConfig model;
    model.id = "sleep";
    model.argv = {"/bin/sleep", "600"};
    model.check_endpoint = "";  // ready when spawned
    swapd::ProcessBackend backend(model, swapd::Config{});
    if (!backend.Start().ok()) return 1;
    const auto stop_begin = Clock::now();
    backend.Stop();
    stop.push_back(Ms(Clock::now() - stop_begin));
  }
  Stats s = Summarize(stop);
  std::printf("%-34s stop (SIGTERM obeyed)  median %.1f ms  p95 %.1f ms  (min %.1f, max %.1f)\n",
              "/bin/sleep as the backend:", s.median, s.p95, s.min, s.max);
  return 0;
}
