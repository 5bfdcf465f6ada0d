#include "backends/spawn_env.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "backends/child_process.h"
#include "backends/readiness_probe.h"
#include "backends/stop_command.h"

namespace swapd {
namespace {

TEST_CASE("MergeEnvironment appends the model env, later wins, K= stays present",
          "[unit][backend]") {
  const char* base[] = {"PATH=/usr/bin", "HOME=/root", "CUDA_VISIBLE_DEVICES=0", "ODD", nullptr};
  std::vector<std::string> env = MergeEnvironment(
      base, {{"CUDA_VISIBLE_DEVICES", ""}, {"LD_LIBRARY_PATH", "/a"}, {"LD_LIBRARY_PATH", "/b"}});
  CHECK(env == std::vector<std::string>{"PATH=/usr/bin", "HOME=/root",
                                        "CUDA_VISIBLE_DEVICES=", "ODD", "LD_LIBRARY_PATH=/b"});
  CHECK(FindEnvValue(env, "CUDA_VISIBLE_DEVICES") == std::optional<std::string>(""));
  CHECK(FindEnvValue(env, "LD_LIBRARY_PATH") == std::optional<std::string>("/b"));
  CHECK_FALSE(FindEnvValue(env, "LD_LIBRARY").has_value());
  CHECK_FALSE(FindEnvValue(env, "ODD").has_value());
  CHECK(MergeEnvironment(nullptr, {{"A", "1"}}) == std::vector<std::string>{"A=1"});
}

TEST_CASE("FindExecutable looks a bare name up in the given PATH", "[unit][backend]") {
  std::string path = "/nonexistent-dir:/bin:/usr/bin";
  Result<std::string> sh = FindExecutable("sh", &path);
  REQUIRE(sh.ok());
  CHECK((sh.value() == "/bin/sh" || sh.value() == "/usr/bin/sh"));
  std::string only_missing = "/nonexistent-dir";
  Result<std::string> missing = FindExecutable("sh", &only_missing);
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("not found in PATH (/nonexistent-dir)"));
  CHECK(FindExecutable("/bin/sh", &only_missing).value() == "/bin/sh");  // a path skips PATH
  CHECK_FALSE(FindExecutable("/nonexistent-dir/x", nullptr).ok());
  std::string plain =
      std::filesystem::temp_directory_path() / ("swapd-plain-" + std::to_string(::getpid()));
  { std::ofstream(plain) << "not a program\n"; }
  ::chmod(plain.c_str(), 0644);
  CHECK_FALSE(FindExecutable(plain, nullptr).ok());  // not executable (even for root)
  std::filesystem::remove(plain);
  CHECK(FindExecutable("sh", nullptr).ok());  // no PATH: the default /bin:/usr/bin
}

TEST_CASE("SubstitutePid replaces ${PID} inside words", "[unit][backend]") {
  CHECK(SubstitutePid({"kill", "-TERM", "${PID}", "x${PID}y${PID}", "$PID"}, 42) ==
        std::vector<std::string>{"kill", "-TERM", "42", "x42y42", "$PID"});
}

TEST_CASE("DescribeWaitStatus says exit code or signal", "[unit][backend]") {
  CHECK(DescribeWaitStatus(3 << 8) == "exit code 3");
  CHECK(DescribeWaitStatus(SIGKILL) == "killed by signal 9 (SIGKILL)");
}

TEST_CASE("PollBackoff starts fast and backs off gently to its cap", "[unit][backend]") {
  PollBackoff backoff(std::chrono::milliseconds(10), std::chrono::milliseconds(100), 1.5);
  CHECK(backoff.Next().count() == 10);
  CHECK(backoff.Next().count() == 15);
  CHECK(backoff.Next().count() == 22);
  for (int i = 0; i < 20; ++i) backoff.Next();
  CHECK(backoff.Next().count() == 100);
}

}  // namespace
}  // namespace swapd
