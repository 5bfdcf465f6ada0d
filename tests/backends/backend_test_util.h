// Helpers for the backends/ tests: free loopback ports, waiting on conditions with deadlines, and
// looking at processes through /proc (alive, zombie children, members of a process group).
// Plain functions; thread safe.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "backends/port_check.h"
#include "config/config.h"
#include "tests/support/proc_file.h"
#include "tests/support/wait.h"

namespace swapd::backend_testing {

using ::swapd::FreeLoopbackPort;  // backends/port_check.h
using testing::AllProcesses;
using testing::ProcStat;
using testing::ReadProcStat;
using testing::WaitFor;
using testing::ZombieChildren;

// True while the process exists and is not a zombie (dead but unreaped counts as gone).
inline bool ProcessRunning(int pid) {
  ProcStat st = ReadProcStat(pid);
  return st.pid != 0 && st.state != 'Z' && st.state != 'X';
}

// Running (non-zombie) processes of a process group.
inline std::vector<int> GroupMembers(int pgid) {
  std::vector<int> out;
  for (const ProcStat& st : AllProcesses()) {
    if (st.pgrp == pgid && st.state != 'Z' && st.state != 'X') out.push_back(st.pid);
  }
  return out;
}

#ifdef FAKE_BACKEND_BINARY
// A model that runs the fake llama-server on a free loopback port.
inline ModelConfig FakeModel(const std::string& id, std::vector<std::string> extra_args = {}) {
  ModelConfig m;
  m.id = id;
  m.port = FreeLoopbackPort();
  m.argv = {FAKE_BACKEND_BINARY, "--port", std::to_string(m.port), "--model", id};
  for (auto& a : extra_args) m.argv.push_back(std::move(a));
  m.proxy = "http://127.0.0.1:" + std::to_string(m.port);
  m.check_endpoint = "/health";
  m.unload_timeout = std::chrono::seconds(10);
  return m;
}
#endif

// A model that runs `/bin/sh -c script`, ready as soon as spawned (checkEndpoint: none).
inline ModelConfig ShellModel(const std::string& id, const std::string& script) {
  ModelConfig m;
  m.id = id;
  m.argv = {"/bin/sh", "-c", script};
  m.proxy = "http://127.0.0.1:1";
  m.check_endpoint = "";
  m.unload_timeout = std::chrono::seconds(10);
  return m;
}

}  // namespace swapd::backend_testing
