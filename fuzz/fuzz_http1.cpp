// fuzz_http1: the HTTP/1.1 response reader the proxy applies to what a backend sends
// (http/http1_response.h). The input is a response as it comes off the wire: a head, then a
// body; its last bytes choose how the wire is cut (FuzzedDataProvider takes integers from the
// end): whether the request was HEAD, a count, then that many piece sizes. A head that parses
// must have a framing consistent with its fields; the body's payload, the decoder's end state
// and the bytes left after the body must not depend on how the wire is cut (whole, in the chosen
// pieces, one byte at a time); a Content-Length body never yields more than its length.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/body_pieces.h"
#include "fuzz/fuzz_check.h"
#include "http/http1_response.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace swapd;
  FuzzedDataProvider provider(data, size);
  const bool head_request = provider.ConsumeBool();
  const std::vector<size_t> sizes = ConsumePieceSizes(provider, 64);
  const std::string wire = provider.ConsumeRemainingBytesAsString();

  const size_t head_end = FindHeadEnd(wire);
  if (head_end == std::string_view::npos) return 0;
  FUZZ_CHECK(head_end <= wire.size(), "the head ends inside the input");
  Result<ResponseStart> parsed =
      ParseResponseHead(std::string_view(wire).substr(0, head_end), head_request);
  if (!parsed.ok()) return 0;
  const ResponseStart& start = parsed.value();
  FUZZ_CHECK(start.status >= 100 && start.status <= 999, "a three-digit status");
  if (head_request) FUZZ_CHECK(start.framing == BodyFraming::kNone, "HEAD has no body");
  for (const HeaderField& field : start.headers) {
    FUZZ_CHECK(field.name.data() >= wire.data() &&
                   field.value.data() + field.value.size() <= wire.data() + head_end,
               "header fields point into the head");
  }
  if (start.framing == BodyFraming::kUntilClose) {
    FUZZ_CHECK(!start.keep_alive, "a body read until close ends the connection");
  }

  const std::string_view body = std::string_view(wire).substr(head_end);
  auto decode = [&](const std::vector<size_t>& pieces) {
    return DecodePieces(start.framing, start.content_length, body, pieces, true, true);
  };
  const DecodedBody whole = decode({});
  FUZZ_CHECK(decode(sizes) == whole, "cut into the chosen pieces");
  FUZZ_CHECK(decode(std::vector<size_t>(body.size(), 1)) == whole, "fed one byte at a time");
  if (start.framing == BodyFraming::kLength) {
    FUZZ_CHECK(whole.payload.size() <= start.content_length, "no more than Content-Length");
    if (whole.done) FUZZ_CHECK(whole.payload.size() == start.content_length, "all of it");
  }
  return 0;
}
