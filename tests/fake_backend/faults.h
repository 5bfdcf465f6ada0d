// Connection-level faults of fake-llama-server: --garbage-response and --close-without-response
// (cpp-httplib gives a handler no socket, so the connection's socket is found by its addresses and
// written to or shut down directly) and the --hang-mid-stream stall. Each call touches only its
// own connection; thread safe.
#pragma once

#include <httplib.h>

#include "tests/fake_backend/options.h"

namespace fake_backend {

// True when model requests are answered by a connection fault instead of HTTP.
bool WantsConnectionFault(const Options& options);

// Applies --garbage-response or --close-without-response on the connection `req` came in on: the
// socket is shut down both ways, so whatever cpp-httplib writes afterwards is lost. Returns false
// (and logs) when the socket could not be found.
bool ApplyConnectionFault(const Options& options, const httplib::Request& req);

// --hang-mid-stream: sends nothing and blocks until the peer is gone or ten minutes have passed.
void HangStream(httplib::DataSink& sink);

}  // namespace fake_backend
