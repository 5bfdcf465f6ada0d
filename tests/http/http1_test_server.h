// The fixture of the Http1Server tests: a server on an ephemeral loopback port running on its own
// thread, an echoing handler, an error renderer, and the count of this process's threads.
#pragma once

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <string_view>
#include <thread>

#include "http/http1_server.h"
#include "http/request_context.h"

namespace swapd::testing {

// An Http1Server on an ephemeral loopback port, running on its own thread.
class Server {
 public:
  explicit Server(Http1Server::Handler handler, Http1ServerSettings settings = {})
      : server_(settings, std::move(handler)) {
    REQUIRE(server_.Bind("127.0.0.1", 0).ok());
    REQUIRE(server_.port() > 0);
    thread_ = std::thread([this] { server_.Run(); });
  }
  ~Server() { Stop(); }
  void Stop() {
    server_.Stop();
    if (thread_.joinable()) thread_.join();
  }
  int port() const { return server_.port(); }
  int threads() const { return server_.threads(); }

 private:
  Http1Server server_;
  std::thread thread_;
};

// Echoes what the handler saw: method, path, the "q" parameter and the body.
inline void Echo(const HttpRequest& req, HttpResponse& res, RequestContext&) {
  std::string q(req.Param("q").value_or(""));
  res.SetBody(req.method + " " + req.path + " q=" + q + " body=" + req.body, "text/plain");
}

// An application's ErrorRenderer: the server answers refused requests with what it makes.
inline void JsonError(HttpResponse& res, int status, std::string_view message) {
  res.status = status;
  res.SetBody("{\"error\":{\"message\":\"" + std::string(message) + "\"}}", "application/json");
}

inline int ThreadCount() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

}  // namespace swapd::testing
