// FakeServer: the HTTP side of fake-llama-server. It serves llama-server's routes (/health,
// /v1/models, /props, the completion APIs, embeddings, transcriptions) plus test routes (/env,
// /slow, /no-content, /last-request, /stats), the slots API (slots.h), and applies the
// --crash-after fault. Handlers run on the server's worker pool; counters are atomics and the last
// request is guarded by a mutex, so every public method is thread safe. Loading (the 503 phase) is
// driven from outside through SetReady.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "tests/fake_backend/completion.h"
#include "tests/fake_backend/faults.h"
#include "tests/fake_backend/options.h"
#include "tests/fake_backend/slots.h"

namespace fake_backend {

class FakeServer {
 public:
  explicit FakeServer(Options options);
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  // Binds --host:--port (port 0 = ephemeral). Returns the bound port, or -1.
  int Bind();
  // Accepts and serves connections until the process exits. Call after Bind.
  void Serve();

  // Ends the loading phase: /health answers 200 and the model routes serve.
  void SetReady() { ready_ = true; }

 private:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

  // How a route is wrapped: introspection routes are not recorded; model routes answer 503 while
  // loading and count towards --crash-after.
  enum class RouteKind { kIntrospection, kPlain, kModel };

  void AddRoute(const char* method, const char* pattern, RouteKind kind, Handler handler);
  void RegisterRoutes();
  void Record(const httplib::Request& req);
  // Counts a model request; returns true when this is the --crash-after request.
  bool CountModelRequest();
  [[noreturn]] void Crash(const std::string& why);

  void HandleCompletion(const httplib::Request& req, httplib::Response& res, CompletionApi api,
                        bool crash);
  void StartStream(httplib::Response& res, CompletionJob job, bool crash);
  void HandleEmbeddings(const httplib::Request& req, httplib::Response& res);
  void HandleTranscription(const httplib::Request& req, httplib::Response& res);
  nlohmann::json ModelsJson() const;
  nlohmann::json PropsJson() const;
  nlohmann::json StatsJson() const;

  const Options options_;
  httplib::Server server_;
  SlotTable slots_;
  KeptConnections kept_;  // --close-kept-connections
  std::atomic<bool> ready_{false};
  std::atomic<int> model_requests_{0};
  std::atomic<int> active_streams_{0};
  std::atomic<int> completed_streams_{0};
  std::atomic<int> cancelled_streams_{0};
  std::atomic<int> active_requests_{0};     // non-streamed ones that take a while (paced)
  std::atomic<int> cancelled_requests_{0};  // of those, the ones whose client went away

  mutable std::mutex mu_;
  nlohmann::json last_request_ = nlohmann::json::object();  // Guarded by mu_
};

}  // namespace fake_backend
