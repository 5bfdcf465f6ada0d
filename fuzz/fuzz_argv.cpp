// fuzz_argv: a `cmd` / `cmdStop` text -> argv (config/argv_split.h). Checked invariants:
// StripCommentLines is idempotent and does not change what SplitCommand makes of a text; a
// successful split has words; words without a newline, each single-quoted again and joined by
// spaces, split back into the same words.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/argv_split.h"
#include "fuzz/fuzz_check.h"

namespace swapd {
namespace {

// The word as a POSIX shell single-quoted string: 'it'\''s'.
std::string SingleQuote(const std::string& word) {
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

bool SameSplit(const Result<std::vector<std::string>>& a,
               const Result<std::vector<std::string>>& b) {
  if (a.ok() != b.ok()) return false;
  if (a.ok()) return a.value() == b.value();
  return a.status().message() == b.status().message();
}

}  // namespace
}  // namespace swapd

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace swapd;
  std::string_view text(reinterpret_cast<const char*>(data), size);

  std::string stripped = StripCommentLines(text);
  FUZZ_CHECK(StripCommentLines(stripped) == stripped, "StripCommentLines is idempotent");
  (void)HasWindowsPath(text);

  Result<std::vector<std::string>> words = SplitCommand(text);
  FUZZ_CHECK(SameSplit(words, SplitCommand(stripped)), "comment lines are dropped either way");
  if (!words.ok()) {
    FUZZ_CHECK(!words.status().message().empty(), "an error says what is wrong");
    return 0;
  }
  FUZZ_CHECK(!words.value().empty(), "a command has words");

  std::string requoted;
  for (const std::string& w : words.value()) {
    // A newline inside quotes is split into lines first, where a `#` line would be a comment;
    // llama-swap does the same, so such words do not round-trip and are not checked.
    if (w.find('\n') != std::string::npos) return 0;
    if (!requoted.empty()) requoted += ' ';
    requoted += SingleQuote(w);
  }
  Result<std::vector<std::string>> again = SplitCommand(requoted);
  FUZZ_CHECK(again.ok() && again.value() == words.value(), "quoted words split back the same");
  return 0;
}
