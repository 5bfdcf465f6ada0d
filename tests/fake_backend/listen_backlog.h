// Raising the listen backlog of a cpp-httplib server. cpp-httplib 0.11 listens with a backlog of
// 5: a burst of clients (wrk's 64 connections, an agent's parallel sub-requests) sees dropped SYNs
// and one-second retransmits. Linux lets listen() be called again on a listening socket to change
// its backlog; cpp-httplib does not expose its socket, so it is found by its port among this
// process's listening sockets. swapd's own front server listens with SOMAXCONN itself; this is
// for the fake llama-server. Thread compatible.
#pragma once

namespace swapd {

// Sets the backlog of this process's listening socket bound to `port` to SOMAXCONN.
void RaiseListenBacklog(int port);

}  // namespace swapd
