// The front door's listening socket: `host:port` (a name, an IPv4 or IPv6 address, or empty for
// every address; port 0 for an ephemeral one) turned into a non-blocking socket listening with
// the system's largest backlog, and the text of a peer's address for logs.
#pragma once

#include <sys/socket.h>

#include <string>

#include "base/status.h"

namespace swapd {

struct ListenSocket {
  int fd = -1;
  int port = 0;  // the port bound (the ephemeral one when 0 was asked for)
};

// The first address of `host` that binds; the error names host, port and why.
Result<ListenSocket> Listen(const std::string& host, int port);

// "127.0.0.1" or "::1"; `port` gets the address's port. "" for another address family.
std::string AddressText(const sockaddr_storage& addr, int& port);

}  // namespace swapd
