// ChatStreamReader: reads the server-sent events of one streamed /v1/chat/completions answer as
// its bytes arrive, and keeps what `swapd bench` measures: when the first and the last generated
// piece came, how many pieces, the text, `usage`, llama.cpp's `timings`, an error event. Then
// MeasureRun turns that into one run's TTFT and tokens/s. Pure (the caller gives the arrival
// times); not synchronized: one reader per stream.
#pragma once

#include <string>
#include <string_view>

namespace swapd {

// One streamed answer as seen by the bench.
struct ChatStreamStats {
  std::string text;              // the content deltas joined (reasoning not included)
  int pieces = 0;                // deltas carrying content or reasoning_content
  double first_piece_ms = -1;    // arrival of the first piece, from the request being sent
  double last_piece_ms = -1;     // arrival of the last piece
  int usage_prompt_tokens = -1;  // usage.prompt_tokens; -1 when not sent
  int usage_completion_tokens = -1;
  double timings_prompt_tps = -1;  // timings.prompt_per_second; -1 when not sent
  double timings_decode_tps = -1;  // timings.predicted_per_second
  int timings_cache_n = -1;        // timings.cache_n: prompt tokens taken from the slot's cache
  int timings_prompt_n = -1;       // timings.prompt_n: prompt tokens processed
  bool done = false;               // "data: [DONE]" arrived
  std::string error;               // an error event's message; empty when none
};

class ChatStreamReader {
 public:
  // `bytes` arrived `at_ms` after the request was sent. Events may be split anywhere.
  void Feed(std::string_view bytes, double at_ms);
  const ChatStreamStats& stats() const { return stats_; }

 private:
  void Event(std::string_view data, double at_ms);

  std::string pending_;  // an incomplete line
  ChatStreamStats stats_;
};

// One measured run.
struct RunMeasure {
  double ttft_ms = -1;
  double prefill_tps = -1;
  double decode_tps = -1;
  bool from_timings = false;  // both tokens/s came from llama.cpp's timings
};

// Prefers `timings`; otherwise decode = (pieces - 1) / (last - first piece) and prefill =
// usage.prompt_tokens / TTFT (each -1 when the stream does not allow it).
RunMeasure MeasureRun(const ChatStreamStats& stats);

}  // namespace swapd
