// Whether the client of a request has closed its connection, for a handler that works for a while
// before it answers. llama-server checks this while it generates a non-streamed answer and
// cancels the task when the client went away; cpp-httplib 0.11 has no call for it
// (Request::is_connection_closed came later), so the socket is found among this process's
// descriptors by the client's port. Thread compatible.
#pragma once

namespace swapd {

class PeerWatch {
 public:
  // The accepted connection whose peer is on `remote_port`, if there is one.
  explicit PeerWatch(int remote_port);
  // True once the peer has closed (or reset) the connection.
  bool Closed() const;

 private:
  int fd_ = -1;
};

}  // namespace swapd
