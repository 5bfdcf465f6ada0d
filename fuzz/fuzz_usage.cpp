// fuzz_usage: the scanner that reads token counts from a response as it streams by
// (frontdoor/usage_scanner.h). The input's last bytes choose how the stream is cut
// (FuzzedDataProvider takes integers from the end): a count, then that many piece sizes; the rest,
// from the start, is the response body. Both modes (SSE and a plain JSON body) are checked: the
// result must not depend on how the stream is cut (whole, in the chosen pieces, one byte at a
// time), and an SSE stream that never mentions "usage" or "timings" yields nothing. A plain body
// must give what the parsed document holds when it is well-formed (tests/support/usage_reference.h,
// the obvious reading).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "frontdoor/usage_scanner.h"
#include "fuzz/body_pieces.h"
#include "fuzz/fuzz_check.h"
#include "tests/support/usage_reference.h"

namespace swapd {
namespace {

bool operator==(const Usage& a, const Usage& b) { return testing::SameUsage(a, b); }

bool IsUnset(const Usage& u) {
  return !u.prompt_tokens && !u.completion_tokens && !u.cached_tokens && !u.prompt_processed &&
         !u.prompt_per_second && !u.predicted_per_second;
}

Usage ScanPieces(bool event_stream, std::string_view stream, const std::vector<size_t>& sizes) {
  UsageScanner scanner(event_stream);
  for (size_t size : sizes) {
    if (stream.empty()) break;
    size_t n = std::min(size, stream.size());
    scanner.Feed(stream.substr(0, n));
    stream.remove_prefix(n);
  }
  scanner.Feed(stream);
  return scanner.Finish();
}

Usage ScanBytes(bool event_stream, std::string_view stream) {
  UsageScanner scanner(event_stream);
  for (char c : stream) scanner.Feed(std::string_view(&c, 1));
  return scanner.Finish();
}

}  // namespace
}  // namespace swapd

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace swapd;
  FuzzedDataProvider provider(data, size);
  const std::vector<size_t> sizes = ConsumePieceSizes(provider, 1024);
  const std::string stream = provider.ConsumeRemainingBytesAsString();

  for (bool event_stream : {true, false}) {
    const Usage whole = ScanPieces(event_stream, stream, {});
    FUZZ_CHECK(ScanPieces(event_stream, stream, sizes) == whole, "cut into the chosen pieces");
    FUZZ_CHECK(ScanBytes(event_stream, stream) == whole, "fed one byte at a time");
    // Of a broken document, only its top level and usage objects are checked (the rest is
    // passed over): the reference's "nothing" holds for well-formed ones only.
    if (!event_stream && stream.size() <= UsageScanner::kMaxBuffered &&
        nlohmann::json::accept(stream)) {
      FUZZ_CHECK(whole == testing::ReferenceUsage(stream), "what the parsed document holds");
    }
    if (event_stream && stream.find("\"usage\"") == std::string::npos &&
        stream.find("\"timings\"") == std::string::npos) {
      FUZZ_CHECK(IsUnset(whole), "no usage without a usage or timings object");
    }
  }
  return 0;
}
