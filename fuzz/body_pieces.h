// What the HTTP/1.1 fuzz targets share: the piece sizes the input's last bytes choose, and a body
// decoded from a wire cut into those pieces, so that a target can check the result does not depend
// on the cut. Header-only; used by one thread.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "http/http1_response.h"

namespace swapd {

// Up to 15 piece sizes of at most `max_size` bytes, taken from the end of the input.
inline std::vector<size_t> ConsumePieceSizes(FuzzedDataProvider& provider, size_t max_size) {
  std::vector<size_t> sizes(provider.ConsumeIntegralInRange<size_t>(0, 15));
  for (size_t& s : sizes) s = provider.ConsumeIntegralInRange<size_t>(0, max_size);
  return sizes;
}

struct DecodedBody {
  std::string payload;
  bool done = false;
  bool failed = false;
  std::string rest;  // bytes after the body (kept only when asked for)
  bool operator==(const DecodedBody&) const = default;
};

// Feeds `wire` to a BodyDecoder in pieces of `sizes` (then the remainder). `end_of_input`: the
// connection closes after the wire (a response); `keep_rest`: collect the bytes after the body.
inline DecodedBody DecodePieces(BodyFraming framing, uint64_t content_length, std::string_view wire,
                                const std::vector<size_t>& sizes, bool end_of_input,
                                bool keep_rest) {
  BodyDecoder decoder(framing, content_length);
  DecodedBody out;
  auto feed = [&](std::string_view in) {
    while (!in.empty() && !decoder.done() && !decoder.failed()) out.payload += decoder.Next(in);
    if (keep_rest && (decoder.done() || decoder.failed())) out.rest += in;
  };
  for (size_t size : sizes) {
    size_t n = std::min(size, wire.size());
    feed(wire.substr(0, n));
    wire.remove_prefix(n);
  }
  feed(wire);
  if (end_of_input) decoder.EndOfInput();
  out.done = decoder.done();
  out.failed = decoder.failed();
  if (out.failed) out.rest.clear();  // where a failure stops reading is not part of the contract
  return out;
}

}  // namespace swapd
