// UsageScanner (frontdoor/usage_scanner.h): the counts must not depend on how a stream is cut.
#include <catch2/catch.hpp>
#include <string>

#include "frontdoor/usage_scanner.h"

namespace swapd {
namespace {

TEST_CASE("the rest of an overlong SSE event is not read as an event of its own", "[unit][fuzz]") {
  // Once an event passed kMaxBuffered the scanner dropped what it had and read the rest of the
  // line as a new line: a `data:` in the middle of a huge line counted, but only when the cut
  // fell just before it.
  const std::string filler(UsageScanner::kMaxBuffered + 1, 'x');
  const std::string tail = R"(data: {"usage":{"prompt_tokens":7}})";
  const std::string next = "\n\ndata: {\"usage\":{\"completion_tokens\":3}}\n\n";

  UsageScanner split(true);
  split.Feed(filler);
  split.Feed(tail);
  split.Feed(next);
  Usage a = split.Finish();

  UsageScanner whole(true);
  whole.Feed(filler + tail + next);
  Usage b = whole.Finish();

  CHECK_FALSE(a.prompt_tokens);
  CHECK_FALSE(b.prompt_tokens);
  CHECK(a.completion_tokens == 3);  // the next event still counts
  CHECK(b.completion_tokens == 3);
}

TEST_CASE("an SSE stream fed one byte at a time gives the same counts", "[unit][fuzz]") {
  const std::string stream =
      "data: {\"choices\":[]}\r\n\r\ndata: {\"usage\":{\"prompt_tokens\":12,"
      "\"completion_tokens\":5},\"timings\":{\"cache_n\":4,\"predicted_per_second\":31.5}}\r\n";
  UsageScanner bytes(true);
  for (char c : stream) bytes.Feed(std::string_view(&c, 1));
  Usage u = bytes.Finish();
  CHECK(u.prompt_tokens == 12);
  CHECK(u.completion_tokens == 5);
  CHECK(u.cached_tokens == 4);
  CHECK(u.predicted_per_second == 31.5);
}

TEST_CASE("a count too large for int64 is ignored, not converted (UBSan)", "[unit][fuzz]") {
  // Converting 1e300 to int64_t is undefined behaviour; UBSan reported it in fuzz_usage.
  UsageScanner scanner(true);
  scanner.Feed(
      "data: {\"usage\":{\"prompt_tokens\":1e300,\"completion_tokens\":18446744073709551615},"
      "\"timings\":{\"cache_n\":-1e19,\"predicted_n\":2.0,\"prompt_per_second\":1e300}}\n");
  Usage u = scanner.Finish();
  CHECK_FALSE(u.prompt_tokens);
  CHECK(u.completion_tokens == 2);  // the too-large one is skipped; predicted_n fills in
  CHECK_FALSE(u.cached_tokens);
  CHECK(u.prompt_per_second == 1e300);  // a speed is a double: kept
}

}  // namespace
}  // namespace swapd
