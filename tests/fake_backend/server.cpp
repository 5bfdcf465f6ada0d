// FakeServer: routing, the loading gate, introspection routes and the request log. The model
// routes (completions, streaming, embeddings, transcriptions) are in model_routes.cpp.
#include "tests/fake_backend/server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <thread>

#include "tests/fake_backend/faults.h"
#include "tests/fake_backend/http_util.h"
#include "tests/fake_backend/listen_backlog.h"
#include "tests/fake_backend/log.h"

extern char** environ;

namespace fake_backend {
namespace {

using nlohmann::json;

std::string Lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// cpp-httplib stores the peer and local addresses as pseudo-headers; they were never sent.
bool IsPseudoHeader(const std::string& name) {
  return name == "REMOTE_ADDR" || name == "REMOTE_PORT" || name == "LOCAL_ADDR" ||
         name == "LOCAL_PORT";
}

json EnvironmentJson() {
  json env = json::object();
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string kv = *entry;
    size_t eq = kv.find('=');
    if (eq == std::string::npos) {
      env[kv] = "";
    } else {
      env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  return env;
}

const std::time_t kStartTime = std::time(nullptr);

}  // namespace

FakeServer::FakeServer(Options options) : options_(std::move(options)), slots_(options_) {
  const size_t threads = static_cast<size_t>(options_.http_threads);
  server_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // Small JSON answers: without TCP_NODELAY, Nagle and delayed ACKs add ~40 ms to each one.
  server_.set_tcp_nodelay(true);
  // SO_REUSEADDR, as llama-server's newer cpp-httplib sets it (0.11's default is SO_REUSEPORT):
  // a port whose last connections still close (FIN-WAIT-2, the proxy's pooled end not yet
  // closed) can be listened on again at once, and swapd's port probe agrees.
  server_.set_socket_options([](socket_t sock) {
    const int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server_.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    // Readiness probes poll /health every few milliseconds; logging them would drown the log.
    if (req.path == "/health") return;
    LogLine("srv  log_server_r: request: " + req.method + " " + req.path + " " + req.remote_addr +
            " " + std::to_string(res.status));
  });
  server_.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;  // a handler already wrote its own error body
    if (res.status == 404) {
      SendError(res, 404, "File Not Found", "not_found_error");
    } else {
      SendError(res, res.status, "HTTP status " + std::to_string(res.status), "server_error");
    }
  });
  server_.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string message = "unknown error";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          message = e.what();
        } catch (...) {
        }
        SendError(res, 500, message, "server_error");
      });
  RegisterRoutes();
}

int FakeServer::Bind() {
  int port = -1;
  if (options_.port == 0) {
    port = server_.bind_to_any_port(options_.host);
  } else if (server_.bind_to_port(options_.host, options_.port)) {
    port = options_.port;
  }
  if (port > 0) swapd::RaiseListenBacklog(port);
  return port;
}

void FakeServer::Serve() { server_.listen_after_bind(); }

void FakeServer::AddRoute(const char* method, const char* pattern, RouteKind kind,
                          Handler handler) {
  auto wrapped = [this, kind, handler = std::move(handler)](const httplib::Request& req,
                                                            httplib::Response& res) {
    if (kind != RouteKind::kIntrospection) Record(req);
    if (kind == RouteKind::kModel && !ready_) {
      SendError(res, 503, "Loading model", "unavailable_error");
      return;
    }
    if (options_.close_kept_connections && kind != RouteKind::kIntrospection &&
        kept_.CloseIfReused(req, kind == RouteKind::kModel)) {
      return;
    }
    if (kind == RouteKind::kModel && WantsConnectionFault(options_) &&
        ApplyConnectionFault(options_, req)) {
      return;
    }
    handler(req, res);
  };
  const std::string m = method;
  if (m == "GET") {
    server_.Get(pattern, wrapped);
  } else if (m == "POST") {
    server_.Post(pattern, wrapped);
  }
}

void FakeServer::RegisterRoutes() {
  using R = RouteKind;
  using Req = httplib::Request;
  using Res = httplib::Response;
  AddRoute("GET", "/health", R::kIntrospection, [this](const Req&, Res& res) {
    if (ready_) {
      SendJson(res, 200, {{"status", "ok"}});
    } else {
      SendError(res, 503, "Loading model", "unavailable_error");
    }
  });
  for (const char* path : {"/v1/models", "/models"}) {
    AddRoute("GET", path, R::kPlain,
             [this](const Req&, Res& res) { SendJson(res, 200, ModelsJson()); });
  }
  // llama-server's web UI: llama-swap's UI loads a model with GET /upstream/<model>/.
  AddRoute("GET", "/", R::kPlain, [this](const Req&, Res& res) {
    res.set_content("<!doctype html><title>fake-llama-server</title><p>" + options_.model +
                        " (fake llama-server)</p>\n",
                    "text/html; charset=utf-8");
  });
  AddRoute("GET", "/props", R::kPlain,
           [this](const Req&, Res& res) { SendJson(res, 200, PropsJson()); });

  const std::pair<const char*, CompletionApi> completion_routes[] = {
      {"/v1/chat/completions", CompletionApi::kChat}, {"/chat/completions", CompletionApi::kChat},
      {"/v1/completions", CompletionApi::kText},      {"/completions", CompletionApi::kText},
      {"/completion", CompletionApi::kNative},
  };
  for (const auto& [path, api] : completion_routes) {
    AddRoute("POST", path, R::kModel, [this, api = api](const Req& req, Res& res) {
      HandleCompletion(req, res, api, CountModelRequest());
    });
  }
  for (const char* path : {"/v1/embeddings", "/embeddings"}) {
    AddRoute("POST", path, R::kModel, [this](const Req& req, Res& res) {
      if (CountModelRequest()) Crash("embeddings request");
      HandleEmbeddings(req, res);
    });
  }
  AddRoute("POST", "/v1/audio/transcriptions", R::kModel, [this](const Req& req, Res& res) {
    if (CountModelRequest()) Crash("transcription request");
    HandleTranscription(req, res);
  });

  // Routes that other servers answer (stable-diffusion.cpp's, a TTS server's, llama.cpp's token
  // counting and control): the fake tells which request it got and which model it serves.
  auto echo = [this](const Req& req, Res& res) {
    SendJson(res, 200,
             {{"object", "fake.echo"},
              {"method", req.method},
              {"path", req.path},
              {"model", options_.ModelId()}});
  };
  for (const char* path : {"/v1/audio/voices", "/sdapi/v1/loras"}) {
    AddRoute("GET", path, R::kModel, echo);
  }
  for (const char* path :
       {"/v1/audio/voices", "/v1/images/generations", "/v1/images/edits", "/sdapi/v1/txt2img",
        "/sdapi/v1/img2img", "/v1/chat/completions/input_tokens", "/v1/responses/input_tokens",
        "/v1/chat/completions/control", "/v1/tasks/run"}) {
    AddRoute("POST", path, R::kModel, echo);
  }

  AddRoute("GET", "/slots", R::kPlain,
           [this](const Req&, Res& res) { SendJson(res, 200, slots_.List()); });
  AddRoute("POST", R"(/slots/(\d+))", R::kModel, [this](const Req& req, Res& res) {
    json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    json response;
    const int status = slots_.Action(std::stoi(req.matches[1].str()), req.get_param_value("action"),
                                     body, &response);
    SendJson(res, status, response);
  });

  // Test routes.
  AddRoute("GET", "/env", R::kPlain,
           [](const Req&, Res& res) { SendJson(res, 200, EnvironmentJson()); });
  auto slow = [](const Req& req, Res& res) {
    long ms = 0;
    try {
      ms = std::clamp(std::stol(req.get_param_value("ms")), 0L, 600000L);
    } catch (const std::exception&) {
      SendError(res, 400, "/slow needs ?ms=N", "invalid_request_error");
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    SendJson(res, 200, {{"slept_ms", ms}});
  };
  // 204 with no Content-Type and no body: an answer that a proxy must not dress up.
  AddRoute("GET", "/no-content", R::kPlain, [](const Req&, Res& res) { res.status = 204; });
  // ?status=N: N with a plain-text body, as a gateway's error page would be.
  AddRoute("GET", "/fail", R::kPlain, [](const Req& req, Res& res) {
    const std::string status = req.has_param("status") ? req.get_param_value("status") : "500";
    res.status = std::atoi(status.c_str());
    res.set_content("fake: failing on purpose with " + status, "text/plain");
  });
  AddRoute("GET", "/slow", R::kPlain, slow);
  AddRoute("POST", "/slow", R::kPlain, slow);
  AddRoute("GET", "/last-request", R::kIntrospection, [this](const Req&, Res& res) {
    std::lock_guard<std::mutex> lock(mu_);
    SendJson(res, 200, last_request_);
  });
  AddRoute("GET", "/stats", R::kIntrospection,
           [this](const Req&, Res& res) { SendJson(res, 200, StatsJson()); });
}

void FakeServer::Record(const httplib::Request& req) {
  json headers = json::object();
  for (const auto& [name, value] : req.headers) {
    if (!IsPseudoHeader(name)) headers[Lowercase(name)] = value;
  }
  json params = json::object();
  for (const auto& [name, value] : req.params) params[name] = value;
  const size_t q = req.target.find('?');
  json record = {{"method", req.method},
                 {"path", req.path},
                 {"query", q == std::string::npos ? "" : req.target.substr(q + 1)},
                 {"params", params},
                 {"headers", headers},
                 {"body", req.body}};
  if (req.is_multipart_form_data()) {
    json fields = json::object();
    json files = json::object();
    for (const auto& [name, part] : req.files) {
      if (part.filename.empty()) {
        fields[name] = part.content;
      } else {
        files[name] = {{"filename", part.filename},
                       {"content_type", part.content_type},
                       {"size", part.content.size()}};
      }
    }
    record["fields"] = fields;
    record["files"] = files;
  }
  std::lock_guard<std::mutex> lock(mu_);
  last_request_ = std::move(record);
}

bool FakeServer::CountModelRequest() {
  const int n = ++model_requests_;
  return options_.crash_after > 0 && n == options_.crash_after;
}

void FakeServer::Crash(const std::string& why) {
  LogLine("fake: crashing on request " + std::to_string(options_.crash_after) + " (" + why +
          ", --crash-after)");
  ::_exit(3);
}

json FakeServer::ModelsJson() const {
  const std::string& id = options_.ModelId();
  json details = {{"parent_model", ""}, {"format", "gguf"},     {"family", ""},
                  {"families", {""}},   {"parameter_size", ""}, {"quantization_level", ""}};
  json ollama_style = {{"name", id},        {"model", id},       {"modified_at", ""},
                       {"size", ""},        {"digest", ""},      {"type", "model"},
                       {"description", ""}, {"tags", {""}},      {"capabilities", {"completion"}},
                       {"parameters", ""},  {"details", details}};
  json meta = {{"vocab_type", 2}, {"n_vocab", 32000},    {"n_ctx_train", options_.ctx_size},
               {"n_embd", 16},    {"n_params", 1000000}, {"size", 1000000}};
  json openai_style = {{"id", id},
                       {"object", "model"},
                       {"created", kStartTime},
                       {"owned_by", "llamacpp"},
                       {"meta", meta}};
  return {{"models", {ollama_style}}, {"object", "list"}, {"data", {openai_style}}};
}

json FakeServer::PropsJson() const {
  json params = {{"n_predict", options_.default_n_predict},
                 {"temperature", 0.8},
                 {"top_k", 40},
                 {"top_p", 0.95},
                 {"stream", false}};
  return {{"default_generation_settings",
           {{"id", 0},
            {"id_task", -1},
            {"n_ctx", options_.ctx_size},
            {"speculative", false},
            {"is_processing", false},
            {"params", params}}},
          {"total_slots", 1},
          {"model_alias", options_.ModelId()},
          {"model_path", options_.model},
          {"modalities", {{"vision", false}, {"audio", false}}},
          {"chat_template", "{% for m in messages %}{{ m.content }}{% endfor %}"},
          {"bos_token", "<s>"},
          {"eos_token", "</s>"},
          {"build_info", "b0000-fake"}};
}

json FakeServer::StatsJson() const {
  return {{"requests", model_requests_.load()},
          {"active_streams", active_streams_.load()},
          {"completed_streams", completed_streams_.load()},
          {"cancelled_streams", cancelled_streams_.load()},
          {"active_requests", active_requests_.load()},
          {"cancelled_requests", cancelled_requests_.load()}};
}

}  // namespace fake_backend
