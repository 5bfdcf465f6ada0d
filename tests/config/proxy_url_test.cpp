// ParseProxyUrl: the one place a model's proxy URL is taken apart.
#include "base/proxy_url.h"

#include <catch2/catch.hpp>

namespace swapd::testing {
namespace {

TEST_CASE("ParseProxyUrl splits origin, path prefix, authority, host and port", "[unit][config]") {
  ProxyUrl a = ParseProxyUrl("http://localhost:5800");
  CHECK(a.origin == "http://localhost:5800");
  CHECK(a.path_prefix.empty());
  CHECK(a.authority == "localhost:5800");
  CHECK(a.host == "localhost");
  CHECK(a.port == 5800);

  ProxyUrl b = ParseProxyUrl("https://[::1]:9000/v1/prefix//");
  CHECK(b.origin == "https://[::1]:9000");
  CHECK(b.path_prefix == "/v1/prefix");
  CHECK(b.authority == "[::1]:9000");
  CHECK(b.host == "::1");
  CHECK(b.port == 9000);

  ProxyUrl c = ParseProxyUrl("http://gpu-box/");
  CHECK(c.origin == "http://gpu-box");
  CHECK(c.path_prefix.empty());
  CHECK(c.authority == "gpu-box");
  CHECK(c.host == "gpu-box");
  CHECK(c.port == 0);
  CHECK(ParseProxyUrl("http://127.0.0.1:99999").port == 0);
}

}  // namespace
}  // namespace swapd::testing
