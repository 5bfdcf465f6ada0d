// Reading a streamed chat answer as the bench measures it: pieces split anywhere, usage, timings,
// error events; and one run's TTFT and tokens/s from timings or from the stream.
#include <catch2/catch.hpp>

#include "scoreboard/bench_runner.h"
#include "scoreboard/chat_stream.h"

namespace swapd {
namespace {

std::string Delta(const std::string& content) {
  return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + content + "\"}}]}\n\n";
}

TEST_CASE("chat stream: pieces, text and times, events split anywhere", "[unit][bench]") {
  const std::string role =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}]}\n\n";
  const std::string usage =
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":3}}\n\n";
  ChatStreamReader reader;
  reader.Feed(role, 5);
  const std::string first = Delta("Hel");
  reader.Feed(first.substr(0, 20), 10);  // half an event: not counted yet
  CHECK(reader.stats().pieces == 0);
  reader.Feed(first.substr(20), 50);
  reader.Feed(": keep-alive\r\n\r\n" + Delta("lo") + Delta(" you"), 70);
  reader.Feed(usage + "data: [DONE]\n\n", 90);
  const ChatStreamStats& s = reader.stats();
  CHECK(s.text == "Hello you");
  CHECK(s.pieces == 3);
  CHECK(s.first_piece_ms == 50);
  CHECK(s.last_piece_ms == 70);
  CHECK(s.usage_prompt_tokens == 100);
  CHECK(s.usage_completion_tokens == 3);
  CHECK(s.done);
  CHECK(s.error.empty());

  // No timings: measured from the stream.
  RunMeasure m = MeasureRun(s);
  CHECK_FALSE(m.from_timings);
  CHECK(m.ttft_ms == 50);
  CHECK(m.decode_tps == Approx(2 * 1000.0 / 20));
  CHECK(m.prefill_tps == Approx(100 * 1000.0 / 50));
}

TEST_CASE("chat stream: llama.cpp timings win; reasoning counts as a piece", "[unit][bench]") {
  ChatStreamReader reader;
  reader.Feed("data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n\n" +
                  Delta("ok") +
                  "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}],"
                  "\"timings\":{\"prompt_per_second\":812.5,\"predicted_per_second\":41.25,"
                  "\"cache_n\":511,\"prompt_n\":1}}\n\n",
              30);
  CHECK(reader.stats().pieces == 2);
  CHECK(reader.stats().timings_cache_n == 511);
  CHECK(reader.stats().timings_prompt_n == 1);
  CHECK(reader.stats().text == "ok");
  RunMeasure m = MeasureRun(reader.stats());
  CHECK(m.from_timings);
  CHECK(m.prefill_tps == 812.5);
  CHECK(m.decode_tps == 41.25);
  CHECK(m.ttft_ms == 30);
}

TEST_CASE("chat stream: an error event", "[unit][bench]") {
  ChatStreamReader reader;
  reader.Feed(Delta("a") +
                  "data: {\"error\":{\"message\":\"backend crashed: exit code 3\",\"type\":\"x\"}}"
                  "\n\n",
              1);
  CHECK(reader.stats().error == "backend crashed: exit code 3");
  // One piece only: no decode speed, no prompt size: nothing to say.
  RunMeasure m = MeasureRun(reader.stats());
  CHECK(m.decode_tps < 0);
  CHECK(m.prefill_tps < 0);
}

TEST_CASE("bench runner: synthetic prompts and medians", "[unit][bench]") {
  const std::string one = SyntheticPrompt(1, 64), two = SyntheticPrompt(2, 64);
  CHECK(one != two);
  CHECK(one.rfind("Run 1.", 0) == 0);
  CHECK(one.find("JSON") == std::string::npos);
  int words = 0;
  bool in_word = false;
  for (char c : one) {
    if (c != ' ' && !in_word) ++words;
    in_word = c != ' ';
  }
  CHECK(words == 64);
  CHECK(SyntheticPrompt(3, 512) == SyntheticPrompt(3, 512));

  CHECK(MedianOfKnown({}) == -1);
  CHECK(MedianOfKnown({-1, -1}) == -1);
  CHECK(MedianOfKnown({3, -1, 1, 2}) == 2);
  CHECK(MedianOfKnown({4, 1, 3, 2}) == 2.5);
}

}  // namespace
}  // namespace swapd
