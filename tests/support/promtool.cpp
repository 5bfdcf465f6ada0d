#include "tests/support/promtool.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

namespace swapd::testing {

std::pair<int, std::string> Promtool(const std::string& text) {
  char path[] = "/tmp/swapd-metrics-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return {-1, "mkstemp failed"};
  close(fd);
  {
    std::ofstream out(path);
    out << text;
  }
  std::string command = std::string("promtool check metrics < ") + path + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    std::remove(path);
    return {-1, "popen failed"};
  }
  std::string output;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
  int status = pclose(pipe);
  std::remove(path);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

std::string PromtoolProblems(const std::string& text) {
  auto [status, output] = Promtool(text);
  std::istringstream lines(output);
  const std::regex colon_lint("^vllm:[a-z_]+ metric names should not contain ':'$");
  std::string problems;
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && !std::regex_match(line, colon_lint)) problems += line + "\n";
  }
  // 3: lint findings only (1 would be a parse error).
  if (status != 0 && status != 3) problems += "promtool exit status " + std::to_string(status);
  const std::string renamed = std::regex_replace(text, std::regex("vllm:"), "vllm_");
  auto [renamed_status, renamed_output] = Promtool(renamed);
  if (renamed_status != 0 || !renamed_output.empty()) {
    problems +=
        "with vllm_ names: status " + std::to_string(renamed_status) + ": " + renamed_output;
  }
  return problems;
}

}  // namespace swapd::testing
