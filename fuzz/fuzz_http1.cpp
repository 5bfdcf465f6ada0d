// fuzz_http1: the HTTP/1.1 response reader the proxy applies to what a backend sends
// (daemon/http1_response.h). The input is a response as it comes off the wire: a head, then a
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

#include "daemon/http1_response.h"
#include "fuzz/fuzz_check.h"

namespace swapd {
namespace {

struct Decoded {
  std::string payload;
  bool done = false;
  bool failed = false;
  std::string rest;  // bytes after the body
  bool operator==(const Decoded&) const = default;
};

Decoded DecodePieces(const ResponseStart& start, std::string_view wire,
                     const std::vector<size_t>& sizes) {
  BodyDecoder decoder(start.framing, start.content_length);
  Decoded out;
  auto feed = [&](std::string_view in) {
    while (!in.empty() && !decoder.done() && !decoder.failed()) out.payload += decoder.Next(in);
    if (decoder.done() || decoder.failed()) out.rest += in;
  };
  for (size_t size : sizes) {
    size_t n = std::min(size, wire.size());
    feed(wire.substr(0, n));
    wire.remove_prefix(n);
  }
  feed(wire);
  decoder.EndOfInput();
  out.done = decoder.done();
  out.failed = decoder.failed();
  if (out.failed) out.rest.clear();  // where a failure stops reading is not part of the contract
  return out;
}

}  // namespace
}  // namespace swapd

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace swapd;
  FuzzedDataProvider provider(data, size);
  const bool head_request = provider.ConsumeBool();
  std::vector<size_t> sizes(provider.ConsumeIntegralInRange<size_t>(0, 15));
  for (size_t& s : sizes) s = provider.ConsumeIntegralInRange<size_t>(0, 64);
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
  if (start.framing == BodyFraming::kUntilClose) {
    FUZZ_CHECK(!start.keep_alive, "a body read until close ends the connection");
  }

  const std::string_view body = std::string_view(wire).substr(head_end);
  const Decoded whole = DecodePieces(start, body, {});
  FUZZ_CHECK(DecodePieces(start, body, sizes) == whole, "cut into the chosen pieces");
  FUZZ_CHECK(DecodePieces(start, body, std::vector<size_t>(body.size(), 1)) == whole,
             "fed one byte at a time");
  if (start.framing == BodyFraming::kLength) {
    FUZZ_CHECK(whole.payload.size() <= start.content_length, "no more than Content-Length");
    if (whole.done) FUZZ_CHECK(whole.payload.size() == start.content_length, "all of it");
  }
  return 0;
}
