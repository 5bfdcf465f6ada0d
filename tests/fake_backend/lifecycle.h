// The process-level behaviour of fake-llama-server around its HTTP server: signal handling, the
// --spawn-grandchild sleeper, the --alloc-mb memory, and the simulated model load (log lines, load
// time, and the
// --exit-during-load / --never-ready faults). Called from main() only; see each function for its
// thread.
#pragma once

#include <functional>

#include "tests/fake_backend/options.h"

namespace fake_backend {

// SIGTERM and SIGINT exit the process at once with status 0, even with open streams (unless
// --ignore-sigterm, which ignores SIGTERM only). SIGPIPE is ignored. Call first, from main().
void InstallSignalHandlers(const Options& options);

// Forks a child that keeps stdout/stderr open and sleeps for up to ten minutes. It stays in our
// process group, so killing the group kills it. Returns its pid, or -1. Call before any thread
// is started.
int SpawnGrandchild(const Options& options);

// Allocates --alloc-mb MiB and writes to every page, so that the process's resident anonymous
// memory grows by that much; the memory is held until the process exits. Call after
// SpawnGrandchild (a fork would share the pages, counting them twice in the group).
void AllocateMemory(const Options& options);

// Simulates loading the model: prints --log-lines lines, waits --load-ms, then calls on_ready (or
// exits with --exit-during-load's code, or stays loading with --never-ready). Blocks; run it on
// its own thread.
void LoadModel(const Options& options, const std::function<void()>& on_ready);

}  // namespace fake_backend
