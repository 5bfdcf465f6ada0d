// fuzz_http1_request: what the front door applies to a client's bytes (http/http1_request.h,
// frontdoor/multipart.h): the request head, the body's framing, the query and a multipart form.
// The input is a request as it comes off the wire; its last bytes (FuzzedDataProvider takes
// integers from the end) choose a count and that many piece sizes. A head that parses must be
// consistent with its fields; the decoded body must not depend on how the wire is cut; a form
// field found in the body lies inside it.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "frontdoor/multipart.h"
#include "fuzz/body_pieces.h"
#include "fuzz/fuzz_check.h"
#include "http/http1_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace swapd;
  FuzzedDataProvider provider(data, size);
  const std::vector<size_t> sizes = ConsumePieceSizes(provider, 64);
  const std::string wire = provider.ConsumeRemainingBytesAsString();

  const size_t head_end = FindHeadEnd(wire);
  if (head_end == std::string_view::npos) return 0;
  RequestHead head;
  RequestError error;
  if (!ParseRequestHead(std::string_view(wire).substr(0, head_end), 64, head, error)) {
    FUZZ_CHECK(error.status >= 400 && error.status < 600, "a refusal is an error status");
    FUZZ_CHECK(!error.message.empty(), "a refusal says why");
    return 0;
  }
  FUZZ_CHECK(!head.method.empty() && !head.target.empty() && head.target[0] == '/',
             "a method and an origin-form target");
  FUZZ_CHECK(head.headers.size() <= 64, "no more fields than allowed");
  FUZZ_CHECK(head.framing != BodyFraming::kUntilClose, "a request body never runs until close");
  if (head.framing == BodyFraming::kNone) FUZZ_CHECK(head.content_length == 0, "no body");
  (void)ParseQuery(head.query);

  const std::string_view body = std::string_view(wire).substr(head_end);
  auto decode = [&](const std::vector<size_t>& pieces) {
    return DecodePieces(head.framing, head.content_length, body, pieces, false, false);
  };
  const DecodedBody whole = decode({});
  FUZZ_CHECK(decode(sizes) == whole, "cut into the chosen pieces");
  if (head.framing == BodyFraming::kLength) {
    FUZZ_CHECK(whole.payload.size() <= head.content_length, "no more than Content-Length");
  }
  if (head.headers.Has("Content-Type")) {
    if (std::optional<std::string> boundary = MultipartBoundary(head.headers.Get("Content-Type"))) {
      FormScan scan = ScanForm(whole.payload, *boundary, "model");
      if (scan.field) {
        FUZZ_CHECK(scan.field->offset + scan.field->size <= whole.payload.size(),
                   "the field lies inside the body");
      }
    }
  }
  return 0;
}
