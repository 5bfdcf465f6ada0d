// PortAllocator: the configured port when free, else the next free one above; ports held by other
// backends, found in use, or fixed for other models are skipped; a port found in use is
// remembered for a while. With a fake probe and clock, plus the real probe on real sockets.
#include "backends/port_allocator.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <set>

#include "backends/port_check.h"

namespace swapd {
namespace {

using namespace std::chrono_literals;

// The ports a fake system says are taken, and a clock the test moves.
struct FakeSystem {
  std::set<int> taken;
  int probes = 0;
  PortAllocator::Clock::time_point now{};

  PortAllocator Allocator() {
    return PortAllocator(
        [this](int port) {
          ++probes;
          return taken.count(port) == 0;
        },
        [this] { return now; });
  }
};

TEST_CASE("PortAllocator gives the configured port when it is free", "[unit][ports]") {
  FakeSystem sys;
  PortAllocator ports = sys.Allocator();
  auto lease = ports.Acquire("a", 5800);
  REQUIRE(lease.ok());
  CHECK(lease.value().port() == 5800);
  CHECK(lease.value().skipped().empty());
  CHECK(ports.Holder(5800) == "a");
  lease.value().Release();
  CHECK(ports.Holder(5800).empty());
}

TEST_CASE("PortAllocator skips a port another process listens on, and remembers it",
          "[unit][ports]") {
  FakeSystem sys;
  sys.taken = {5800, 5801};
  PortAllocator ports = sys.Allocator();
  auto lease = ports.Acquire("a", 5800);
  REQUIRE(lease.ok());
  CHECK(lease.value().port() == 5802);
  REQUIRE(lease.value().skipped().size() == 2);
  CHECK(lease.value().skipped()[0].port == 5800);
  CHECK(lease.value().skipped()[0].why == "in use by another process");
  CHECK(sys.probes == 3);
  lease.value().Release();

  // Within the memory the busy ports are not looked at again, even once they are free.
  sys.taken.clear();
  sys.now += 5s;
  auto again = ports.Acquire("a", 5800);
  REQUIRE(again.ok());
  CHECK(again.value().port() == 5802);
  CHECK(again.value().skipped()[0].why == "in use (seen 5 s ago)");
  CHECK(sys.probes == 4);
  again.value().Release();

  // After it they are.
  sys.now += PortAllocator::kBusyMemory;
  auto later = ports.Acquire("a", 5800);
  REQUIRE(later.ok());
  CHECK(later.value().port() == 5800);
}

TEST_CASE("PortAllocator never gives one port to two backends", "[unit][ports]") {
  FakeSystem sys;
  PortAllocator ports = sys.Allocator();
  auto a = ports.Acquire("a", 5800);
  auto b = ports.Acquire("b", 5800);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a.value().port() == 5800);
  CHECK(b.value().port() == 5801);
  CHECK(b.value().skipped()[0].why == "held by model \"a\"");

  // Until the first one stops: then its port is free again.
  a.value().Release();
  auto c = ports.Acquire("c", 5800);
  REQUIRE(c.ok());
  CHECK(c.value().port() == 5800);
}

TEST_CASE("PortAllocator: a lease gives its port back when destroyed or moved over",
          "[unit][ports]") {
  FakeSystem sys;
  PortAllocator ports = sys.Allocator();
  {
    auto a = ports.Acquire("a", 5800);
    REQUIRE(a.ok());
    PortLease moved = std::move(a).value();
    CHECK(moved.held());
    CHECK(ports.Holder(5800) == "a");
  }
  CHECK(ports.Holder(5800).empty());
  PortLease lease = ports.Acquire("a", 5800).value();
  lease = ports.Acquire("b", 5900).value();  // the first one is given back
  CHECK(ports.Holder(5800).empty());
  CHECK(ports.Holder(5900) == "b");
}

TEST_CASE("PortAllocator: a port the backend could not bind is skipped next time",
          "[unit][ports]") {
  FakeSystem sys;
  PortAllocator ports = sys.Allocator();
  PortLease first = ports.Acquire("a", 5800).value();
  REQUIRE(first.port() == 5800);
  first.MarkBusy();  // the process said "address already in use"
  CHECK_FALSE(first.held());
  CHECK(ports.Holder(5800).empty());
  PortLease second = ports.Acquire("a", 5800).value();
  CHECK(second.port() == 5801);
  CHECK(second.skipped()[0].why == "in use (seen 0 s ago)");
}

TEST_CASE("PortAllocator skips the fixed ports of other models, and fails clearly when full",
          "[unit][ports]") {
  FakeSystem sys;
  PortAllocator ports = sys.Allocator();
  auto lease = ports.Acquire("a", 5800, {5800});
  REQUIRE(lease.ok());
  CHECK(lease.value().port() == 5801);
  CHECK(lease.value().skipped()[0].why == "the fixed port of another model");

  for (int p = 6000; p < 6000 + PortAllocator::kMaxScan; ++p) sys.taken.insert(p);
  auto none = ports.Acquire("b", 6000);
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(none.status().message(), Catch::Contains("no free port for ${PORT} in 6000-6255"));

  auto top = ports.Acquire("c", 65535);
  REQUIRE(top.ok());
  CHECK(top.value().port() == 65535);
  auto over = ports.Acquire("d", 65535);
  CHECK_FALSE(over.ok());
}

TEST_CASE("PortBindable: false while a socket listens on the port, on loopback or any address",
          "[unit][ports]") {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  const int port = ntohs(addr.sin_port);
  REQUIRE(::listen(fd, 4) == 0);
  CHECK_FALSE(PortBindable(port));
  ::close(fd);
  CHECK(PortBindable(port));
}

TEST_CASE("SaysAddressInUse knows the words of the usual servers", "[unit][ports]") {
  CHECK(SaysAddressInUse("listen tcp 127.0.0.1:5800: bind: address already in use"));
  CHECK(SaysAddressInUse("OSError: [Errno 98] Address already in use"));
  CHECK(
      SaysAddressInUse("main: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 5800"));
  CHECK(SaysAddressInUse("Error: listen EADDRINUSE: address already in use :::5800"));
  CHECK_FALSE(SaysAddressInUse("main: model loaded\nmain: server is listening"));
  CHECK_FALSE(SaysAddressInUse(""));
}

}  // namespace
}  // namespace swapd
