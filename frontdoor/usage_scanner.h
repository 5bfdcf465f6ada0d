// UsageScanner: reads token counts and speeds from a response as it streams by, without delaying
// it: OpenAI `usage` (prompt_tokens, completion_tokens) and llama.cpp `timings`
// (prompt_per_second, predicted_per_second, cache_n, prompt_n). For SSE it looks at each `data:`
// event (the last one that carries them wins); for a plain JSON body, at the whole document.
// Of a well-formed document it reads what a parser would find; it checks only the top level and
// the `usage` and `timings` objects, though, and passes over the rest (the choices, however long)
// unchecked: a document broken only there still gives its counts. Bounded memory: an event or body
// beyond kMaxBuffered bytes is skipped. Not thread safe: one per response.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace swapd {

struct Usage {
  std::optional<int64_t> prompt_tokens;
  std::optional<int64_t> completion_tokens;
  std::optional<int64_t> cached_tokens;     // timings.cache_n: reused from the prompt cache
  std::optional<int64_t> prompt_processed;  // timings.prompt_n: processed for this request
  std::optional<double> prompt_per_second;
  std::optional<double> predicted_per_second;
  bool empty() const { return !prompt_tokens && !completion_tokens && !predicted_per_second; }
};

class UsageScanner {
 public:
  static constexpr size_t kMaxBuffered = 4 << 20;

  explicit UsageScanner(bool event_stream) : event_stream_(event_stream) {}

  void Feed(std::string_view bytes);
  // Call once the body is complete.
  Usage Finish();

 private:
  void ScanDocument(std::string_view json_text);
  void ScanEvents();

  bool event_stream_;
  bool overflow_ = false;
  std::string buffer_;
  // SSE: buffer_[0, scanned_) holds no newline, so an event arriving in many small pieces is
  // searched once, not once per piece.
  size_t scanned_ = 0;
  // SSE: the start of an event longer than kMaxBuffered was dropped; the rest of it is skipped up
  // to its newline (never read as an event of its own).
  bool skipping_ = false;
  Usage usage_;
};

}  // namespace swapd
