// Connection-level faults of fake-llama-server: --garbage-response, --close-without-response and
// --close-kept-connections
// (cpp-httplib gives a handler no socket, so the connection's socket is found by its addresses and
// written to or shut down directly) and the --hang-mid-stream stall. Each call touches only its
// own connection; thread safe.
#pragma once

#include <httplib.h>
#include <sys/types.h>

#include <mutex>
#include <set>

#include "tests/fake_backend/options.h"

namespace fake_backend {

// True when model requests are answered by a connection fault instead of HTTP.
bool WantsConnectionFault(const Options& options);

// Applies --garbage-response or --close-without-response on the connection `req` came in on: the
// socket is shut down both ways, so whatever cpp-httplib writes afterwards is lost. Returns false
// (and logs) when the socket could not be found.
bool ApplyConnectionFault(const Options& options, const httplib::Request& req);

// --close-kept-connections: a request that comes on a connection which carried one before is not
// answered (model routes; any route counts as the first): the connection is shut down. Real
// llama-server closes its connection after every streamed answer, a moment after the last chunk,
// so a proxy's next request on that kept-alive connection finds it closed; here it always does.
class KeptConnections {
 public:
  // Notes `req`'s connection; true when it had carried a request before and `model_route` (it
  // was then shut down).
  bool CloseIfReused(const httplib::Request& req, bool model_route);

 private:
  std::mutex mu_;
  std::set<ino_t> seen_;  // Guarded by mu_; the sockets' inode numbers (never reused while open)
};

// --hang-mid-stream: sends nothing and blocks until the peer is gone or ten minutes have passed.
void HangStream(httplib::DataSink& sink);

}  // namespace fake_backend
