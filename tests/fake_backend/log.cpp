#include "tests/fake_backend/log.h"

#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <string>

namespace fake_backend {
namespace {

std::mutex& StdoutMutex() {
  static std::mutex mu;
  return mu;
}

void WriteAll(std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(STDOUT_FILENO, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // EPIPE: the reader went away; SIGPIPE is ignored
    text.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

void LogLine(std::string_view line) {
  std::string buffer;
  buffer.reserve(line.size() + 1);
  buffer.append(line);
  buffer.push_back('\n');
  std::lock_guard<std::mutex> lock(StdoutMutex());
  WriteAll(buffer);
}

void LogRaw(std::string_view text) {
  std::lock_guard<std::mutex> lock(StdoutMutex());
  WriteAll(text);
}

}  // namespace fake_backend
