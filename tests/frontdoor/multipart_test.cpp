// Unit tests of the multipart/form-data reader: the boundary and the model field.
#include "frontdoor/multipart.h"

#include <catch2/catch.hpp>

#include <string>

namespace swapd {
namespace {

TEST_CASE("multipart: the boundary and the model field", "[unit][front]") {
  CHECK(MultipartBoundary("multipart/form-data; boundary=XyZ") == "XyZ");
  CHECK(MultipartBoundary("Multipart/Form-Data; charset=x; boundary=\"a b\"") == "a b");
  CHECK_FALSE(MultipartBoundary("application/json"));
  CHECK_FALSE(MultipartBoundary("multipart/form-data"));

  const std::string body =
      "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n"
      "Content-Type: audio/wav\r\n\r\nRIFF--XyZ\r\n\r\n--XyZ\r\n"
      "Content-Disposition: form-data; name=\"model\"\r\n\r\nwhisper\r\n--XyZ--\r\n";
  FormScan scan = ScanForm(body, "XyZ", "model");
  CHECK(scan.well_formed);
  REQUIRE(scan.field);
  CHECK(body.substr(scan.field->offset, scan.field->size) == "whisper");
  CHECK_FALSE(ScanForm(body, "XyZ", "language").field);
  CHECK(ScanForm(body, "XyZ", "language").well_formed);

  // Truncated: no closing delimiter. The field before the cut is still found.
  FormScan cut = ScanForm(body.substr(0, body.size() - 4), "XyZ", "model");
  CHECK_FALSE(cut.well_formed);
  CHECK(cut.field);
  FormScan cut_early = ScanForm(body.substr(0, 60), "XyZ", "model");
  CHECK_FALSE(cut_early.well_formed);
  CHECK_FALSE(cut_early.field);
  CHECK_FALSE(ScanForm("no delimiter at all", "XyZ", "model").well_formed);
  // A preamble before the first delimiter is skipped.
  FormScan preamble = ScanForm("ignored\r\n" + body, "XyZ", "model");
  CHECK(preamble.well_formed);
  CHECK(preamble.field);
}

}  // namespace
}  // namespace swapd
