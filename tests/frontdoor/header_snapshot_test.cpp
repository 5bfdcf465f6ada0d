// Tests of HeaderSnapshot (what the in-flight table and captures keep of headers): llama-swap's
// map (canonical names, the first value, credentials redacted as they are copied), fields left
// out by a skip rule, Add and Has; and that RequestCapture::Bytes counts what malloc really holds.
#include "frontdoor/header_snapshot.h"

#include <malloc.h>

#include <catch2/catch.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "frontdoor/request_capture.h"

namespace swapd::testing {
namespace {

using nlohmann::json;

TEST_CASE("HeaderSnapshot: canonical names, the first value, credentials redacted",
          "[unit][events]") {
  CHECK(CanonicalHeaderName("x-litellm-session-id") == "X-Litellm-Session-Id");
  CHECK(CanonicalHeaderName("CONTENT-type") == "Content-Type");

  HttpHeaders headers;
  headers.Add("authorization", "Bearer sk-secret");
  headers.Add("X-API-KEY", "sk-other");
  headers.Add("x-goog-api-key", "g");
  headers.Add("content-type", "application/json");
  headers.Add("X-Trace", "first");
  headers.Add("x-trace", "second");
  headers.Add("Empty", "");
  const HeaderSnapshot kept(headers);
  CHECK(kept.ToJson() == json{{"Authorization", "[REDACTED]"},
                              {"X-Api-Key", "[REDACTED]"},
                              {"X-Goog-Api-Key", "[REDACTED]"},
                              {"Content-Type", "application/json"},
                              {"X-Trace", "first"},
                              {"Empty", ""}});
  CHECK(kept.Has("CONTENT-TYPE"));
  CHECK_FALSE(kept.Has("Content-Length"));
  CHECK(HeaderSnapshot().ToJson() == json::object());
  CHECK(HeaderSnapshot().empty());
}

TEST_CASE("HeaderSnapshot: fields a rule skips are left out; Add appends", "[unit][events]") {
  const std::vector<HeaderField> fields = {
      {"Connection", "keep-alive"}, {"Set-Cookie", "a=b"}, {"Content-Length", "2"}};
  HeaderSnapshot kept(fields, [](std::string_view name) { return name == "Connection"; });
  kept.Add("Content-Length", "3");  // the first one stays
  kept.Add("X-New", std::string(300, 'v'));
  CHECK(kept.ToJson() == json{{"Set-Cookie", "[REDACTED]"},
                              {"Content-Length", "2"},
                              {"X-New", std::string(300, 'v')}});
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
TEST_CASE("RequestCapture::Bytes is what malloc holds for the captures", "[unit][captures]") {
  HttpHeaders headers;
  headers.Add("Content-Type", "application/json");
  headers.Add("Authorization", "Bearer sk-secret");
  headers.Add("User-Agent", "OpenAI/Python 1.99.0");
  HttpHeaders answer;
  answer.Add("Content-Type", "application/json");
  answer.Add("Server", "llama.cpp");
  std::vector<std::shared_ptr<const RequestCapture>> captures;
  captures.reserve(10000);  // ~20 MB: what malloc caches freed (tcache) is noise
  const size_t before = mallinfo2().uordblks;
  size_t counted = 0;
  for (size_t i = 0; i < captures.capacity(); ++i) {
    CaptureBuilder builder(size_t{1} << 20, "/v1/chat/completions", &headers,
                           std::string(40 + i % 700, 'q'));
    builder.SetResponseHeaders(answer, "application/json");
    builder.AddResponseBytes(std::string(20 + i % 300, 'a'));
    builder.AddResponseBytes(std::string(i % 5000, 'b'));  // grown: spare room is given back
    captures.push_back(builder.Finish(200));
    counted += captures.back()->Bytes();
  }
  const size_t held = mallinfo2().uordblks - before;
  INFO("counted " << counted << ", malloc holds " << held);
  CHECK(held >= counted * 99 / 100);
  CHECK(held <= counted * 101 / 100);
}
#endif

}  // namespace
}  // namespace swapd::testing
