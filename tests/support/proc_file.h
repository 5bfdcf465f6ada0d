// ReadProcFile: the text of a /proc file for tests that look at processes.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <string>

namespace swapd::testing {

// A /proc file's text; empty when it cannot be read. read(2), not std::ifstream: a process that
// exits while it is read makes the read fail (ESRCH), which std::filebuf throws as an exception;
// here it is simply gone.
inline std::string ReadProcFile(const std::string& path) {
  std::string text;
  if (int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
    char buf[4096];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
    close(fd);
  }
  return text;
}

}  // namespace swapd::testing
