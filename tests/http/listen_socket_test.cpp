// Tests of Listen and AddressText: an ephemeral port, a port already taken, an address of no
// interface here, and the text of IPv4 and IPv6 addresses.
#include "http/listen_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <string>

namespace swapd {
namespace {

TEST_CASE("Listen binds an ephemeral loopback port and names what it cannot bind",
          "[unit][listen]") {
  Result<ListenSocket> first = Listen("127.0.0.1", 0);
  REQUIRE(first.ok());
  CHECK(first.value().fd >= 0);
  CHECK(first.value().port > 0);

  // The same port again: taken (SO_REUSEADDR does not let two sockets listen on it).
  const int port = first.value().port;
  Result<ListenSocket> again = Listen("127.0.0.1", port);
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().message() ==
        "cannot listen on 127.0.0.1:" + std::to_string(port) + " (Address already in use)");
  ::close(first.value().fd);

  // An address of no interface here (TEST-NET-1; nothing is sent anywhere).
  Result<ListenSocket> foreign = Listen("192.0.2.1", 0);
  REQUIRE_FALSE(foreign.ok());
  CHECK(foreign.status().message() ==
        "cannot listen on 192.0.2.1:0 (Cannot assign requested address)");
}

TEST_CASE("AddressText gives the address and its port", "[unit][listen]") {
  sockaddr_storage storage{};
  auto& in = reinterpret_cast<sockaddr_in&>(storage);
  in.sin_family = AF_INET;
  in.sin_port = htons(8080);
  inet_pton(AF_INET, "127.0.0.1", &in.sin_addr);
  int port = 0;
  CHECK(AddressText(storage, port) == "127.0.0.1");
  CHECK(port == 8080);

  storage = {};
  auto& in6 = reinterpret_cast<sockaddr_in6&>(storage);
  in6.sin6_family = AF_INET6;
  in6.sin6_port = htons(443);
  inet_pton(AF_INET6, "::1", &in6.sin6_addr);
  CHECK(AddressText(storage, port) == "::1");
  CHECK(port == 443);
}

}  // namespace
}  // namespace swapd
