// The Ollama routes, top-down: the model-file routes and the listings, then one generation
// (parse, resolve, dispatch into an inner response, translate it back) and the stream's relay.
#include "frontdoor/ollama_routes.h"

#include <memory>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/unix_time.h"
#include "frontdoor/error_response.h"
#include "frontdoor/ollama_answer.h"
#include "frontdoor/ollama_models.h"
#include "frontdoor/ollama_translate.h"
#include "frontdoor/proxy_message.h"

namespace swapd {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

void OllamaError(HttpResponse& res, int status, const std::string& message) {
  res.status = status;
  res.SetBody(JsonText(json{{"error", message}}), "application/json; charset=utf-8");
}

void OllamaJson(HttpResponse& res, const json& body) {
  res.SetBody(JsonText(body), "application/json; charset=utf-8");
}

// The request's body as a JSON document; answers 400 and returns null when it is not one.
std::optional<json> OllamaBody(const HttpRequest& req, HttpResponse& res) {
  json body = json::parse(req.body, nullptr, false);
  if (body.is_discarded()) {
    OllamaError(res, 400, "invalid JSON in the request body");
    return std::nullopt;
  }
  if (!body.is_object()) {
    OllamaError(res, 400, "the request body must be a JSON object");
    return std::nullopt;
  }
  return body;
}

// A name as Ollama's clients write it: an id, alias, selector or peer's model of the config as
// it is, or one without a tag with ":latest" added. Returns where it goes and the name to send.
struct OllamaTarget {
  FrontDoor::Resolution where;
  std::string name;  // the name the config knows (without a ":latest" it did not have)
};
std::optional<OllamaTarget> ResolveOllamaName(FrontDoor& door, const std::string& name) {
  if (std::optional<FrontDoor::Resolution> where = door.Resolve(name)) {
    return OllamaTarget{std::move(*where), name};
  }
  constexpr std::string_view kLatest = ":latest";
  if (name.size() > kLatest.size() && name.ends_with(kLatest)) {
    const std::string bare = name.substr(0, name.size() - kLatest.size());
    if (std::optional<FrontDoor::Resolution> where = door.Resolve(bare)) {
      return OllamaTarget{std::move(*where), bare};
    }
  }
  return std::nullopt;
}

// The context of the inner dispatch: the answer's head is waited for on this thread (never in the
// server's epoll set), so that the handler has it, whole or as a stream, when Dispatch returns.
class OllamaInnerContext final : public RequestContext {
 public:
  explicit OllamaInnerContext(RequestContext& outer) : outer_(outer) {}
  bool ShouldDefer() const override { return false; }
  void Defer(DeferredStep step) override { step_ = std::move(step); }
  void WillBlock() override { outer_.WillBlock(); }
  bool ClientGone() const override { return outer_.ClientGone(); }
  bool WaitReadable(int fd, std::chrono::milliseconds timeout) override {
    return outer_.WaitReadable(fd, timeout);
  }
  // Runs a step the dispatch deferred regardless (none does while ShouldDefer is false).
  void Complete(HttpResponse& res) {
    while (!step_.done()) {
      DeferredStep step = std::move(step_);
      step_ = {};
      WaitEnd end = WaitEnd::kReady;
      while (!WaitReadable(step.fd, std::chrono::milliseconds(200))) {
        if (ClientGone()) {
          end = WaitEnd::kClientGone;
          break;
        }
        if (Clock::now() >= step.deadline) {
          end = WaitEnd::kTimedOut;
          break;
        }
      }
      WillBlock();
      step_ = step.resume(res, end, *this);
    }
  }

 private:
  RequestContext& outer_;
  DeferredStep step_;
};

// Reads a streamed inner body whole (an answer to a request that was not streamed, or a large one).
class OllamaCollector final : public BodyWriter {
 public:
  bool Write(std::string_view piece) override {
    body.append(piece);
    return true;
  }
  void End() override { ended = true; }
  std::string body;
  bool ended = false;
};

std::string OllamaWholeBody(HttpResponse& inner, RequestContext& ctx) {
  if (!inner.stream) return std::move(inner.body);
  OllamaCollector collector;
  while (!collector.ended && inner.stream->next(collector, ctx)) {
  }
  inner.stream->whole = collector.ended;
  inner.stream.reset();
  return std::move(collector.body);
}

// Passes an SSE stream's pieces through an OllamaStream to the client.
class OllamaRelay final : public BodyWriter {
 public:
  OllamaRelay(OllamaStream& stream, BodyWriter& out) : stream_(stream), out_(out) {}
  bool Write(std::string_view piece) override {
    const std::string lines = stream_.Feed(piece);
    return lines.empty() || out_.Write(lines);
  }
  void End() override {
    const std::string lines = stream_.Finish();
    if (!lines.empty()) out_.Write(lines);
    out_.End();
  }

 private:
  OllamaStream& stream_;
  BodyWriter& out_;
};

// One generation under way: what the handler and the stream's producer share.
// What keep_alive asks of a local model's residency once an answer is done: 0 unloads it, a
// duration replaces its ttl until it stops, a negative value keeps it (no ttl), absent leaves it.
void ApplyKeepAlive(Router& router, const std::string& model_id, const KeepAlive& keep_alive) {
  switch (keep_alive.kind) {
    case KeepAlive::Kind::kDefault:
      return;
    case KeepAlive::Kind::kUnload:
      return router.BeginUnload(model_id);
    case KeepAlive::Kind::kForever:
      return router.SetResidencyTtl(model_id, std::chrono::seconds(0));
    case KeepAlive::Kind::kFor:
      return router.SetResidencyTtl(model_id, keep_alive.duration);
  }
}

struct OllamaCall {
  OllamaRequest request;
  std::string body;  // the OpenAI request, as sent
  HttpResponse inner;
  std::string model_id;  // the local model's id (keep_alive), "" for a peer's
  Router* router = nullptr;
  std::unique_ptr<OllamaStream> stream;

  // The answer is done with: its lease released, then keep_alive 0 unloads the model.
  void Done(bool whole) {
    if (inner.stream) {
      inner.stream->whole = whole;
      inner.stream.reset();
    }
    if (!model_id.empty()) ApplyKeepAlive(*router, model_id, request.keep_alive);
  }
};

// How long this request waited for its model's start: zero unless it was not ready before.
std::chrono::nanoseconds OllamaLoadTime(const Router& router, const std::string& id,
                                        Clock::time_point arrived) {
  for (const ModelSnapshot& snapshot : router.Snapshot()) {
    if (snapshot.id != id || snapshot.backend.state != BackendState::kReady) continue;
    if (snapshot.backend.since > arrived) return snapshot.backend.since - arrived;
  }
  return {};
}

enum class OllamaKind { kChat, kGenerate, kEmbed, kEmbeddings };

// A request without anything to generate: loads the model (waiting until it is ready, as Ollama
// does) or, with keep_alive 0, unloads it. done_reason "load" or "unload". A peer's model is
// neither loaded nor unloaded from here.
void AnswerLoadOnly(Router& router, const OllamaTarget& target, const OllamaRequest& request,
                    OllamaApi api, Clock::time_point arrived, HttpResponse& res,
                    RequestContext& ctx) {
  const ModelConfig* local = target.where.to.model;
  OllamaClock clock{arrived, {}};
  std::string reason = "load";
  if (request.keep_alive.kind == KeepAlive::Kind::kUnload) {
    reason = "unload";
    if (local != nullptr) router.BeginUnload(local->id);
  } else if (local != nullptr) {
    const bool was_ready = router.IsReady(local->id);
    Result<Lease> lease = router.Acquire(local->id, arrived + std::chrono::hours(1), [&ctx] {
      ctx.WillBlock();
      return ctx.ClientGone();
    });
    if (!lease.ok()) {
      return OllamaError(res, HttpStatusOf(lease.status().code()), lease.status().message());
    }
    lease.value().Release();
    ApplyKeepAlive(router, local->id, request.keep_alive);
    if (!was_ready) clock.load = OllamaLoadTime(router, local->id, arrived);
  }
  json out = OllamaAnswerOf(json::object(), request.model, api, clock);
  out["done_reason"] = reason;
  if (!request.stream) return OllamaJson(res, out);
  res.SetBody(JsonText(out) + "\n", "application/x-ndjson");
}

void HandleOllamaCall(FrontDoor& door, Router& router, OllamaKind kind, const HttpRequest& req,
                      HttpResponse& res, RequestContext& ctx) {
  const Clock::time_point arrived = Clock::now();
  std::optional<json> body = OllamaBody(req, res);
  if (!body) return;
  const bool embed = kind == OllamaKind::kEmbed || kind == OllamaKind::kEmbeddings;
  Result<OllamaRequest> parsed =
      kind == OllamaKind::kChat ? ChatRequestFromOllama(*body)
      : kind == OllamaKind::kGenerate
          ? GenerateRequestFromOllama(*body)
          : EmbedRequestFromOllama(*body, kind == OllamaKind::kEmbeddings);
  if (!parsed.ok()) return OllamaError(res, 400, parsed.status().message());
  auto call = std::make_shared<OllamaCall>();
  call->request = std::move(parsed).value();
  const std::string& model = call->request.model;
  std::optional<OllamaTarget> target = ResolveOllamaName(door, model);
  if (!target) return OllamaError(res, 404, "model \"" + model + "\" not found");
  const OllamaApi api = kind == OllamaKind::kChat ? OllamaApi::kChat : OllamaApi::kGenerate;
  if (call->request.load_only) {
    return AnswerLoadOnly(router, *target, call->request, api, arrived, res, ctx);
  }
  call->request.openai["model"] = target->name;
  call->body = JsonText(call->request.openai);
  call->router = &router;
  const ModelConfig* local = target->where.to.model;
  if (local != nullptr) call->model_id = local->id;
  const bool was_ready = local == nullptr || router.IsReady(local->id);

  OllamaInnerContext inner_ctx(ctx);
  door.DispatchJson(target->where, req, call->request.route, call->body, call->inner, inner_ctx);
  inner_ctx.Complete(call->inner);
  OllamaClock clock{arrived, was_ready ? std::chrono::nanoseconds(0)
                                       : OllamaLoadTime(router, call->model_id, arrived)};
  HttpResponse& inner = call->inner;
  const bool sse = inner.stream && IsEventStream(inner.headers.Get("Content-Type"));
  if (inner.status >= 400) {
    const std::string error = OllamaWholeBody(inner, ctx);
    call->Done(false);
    return OllamaError(res, inner.status, OllamaErrorMessage(error));
  }
  if (!sse) {
    const json answer = json::parse(OllamaWholeBody(inner, ctx), nullptr, false);
    call->Done(true);
    if (!answer.is_object()) {
      return OllamaError(res, 502, "model \"" + model + "\": the backend's answer is not JSON");
    }
    if (embed)
      return OllamaJson(res,
                        OllamaEmbeddingsOf(answer, model, kind == OllamaKind::kEmbeddings, clock));
    json out = OllamaAnswerOf(answer, model, api, clock);
    if (!call->request.stream) return OllamaJson(res, out);
    return res.SetBody(JsonText(out) + "\n", "application/x-ndjson");
  }
  call->stream = std::make_unique<OllamaStream>(model, api, clock);
  if (!call->request.stream) {
    // A backend that streamed what was asked whole: gathered here.
    std::string lines = call->stream->Feed(OllamaWholeBody(inner, ctx)) + call->stream->Finish();
    call->Done(true);
    json last = json::parse(lines.substr(lines.rfind('\n', lines.size() - 2) + 1), nullptr, false);
    return OllamaJson(res, last);
  }
  res.SetStream(
      "application/x-ndjson",
      [call](BodyWriter& out, RequestContext& stream_ctx) {
        OllamaRelay relay(*call->stream, out);
        return call->inner.stream->next(relay, stream_ctx);
      },
      [call](bool whole) { call->Done(whole); });
}

void AddModelFileRoutes(FrontDoor& door) {
  auto refuse = [](const HttpRequest& req, HttpResponse& res, RequestContext&) {
    OllamaError(res, 501,
                "swapd serves the models of its config; " + req.method + " " + req.path +
                    " is not supported: add or change a model by editing config.yaml (swapd "
                    "reloads it with --watch-config or POST /api/config/reload)");
  };
  for (const char* path : {"/api/pull", "/api/push", "/api/create", "/api/copy"}) {
    door.AddRoute("POST", path, refuse);
  }
  door.AddRoute("DELETE", "/api/delete", refuse);
  door.AddRoute("POST", "/api/blobs/", refuse);
  door.AddRoute("HEAD", "/api/blobs/", refuse);
}

}  // namespace

void AddOllamaRoutes(FrontDoor& door, Router& router) {
  door.AddRoute("GET", "/api/tags",
                [&door](const HttpRequest&, HttpResponse& res, RequestContext&) {
                  OllamaJson(res, OllamaTags(*door.routing().config()));
                });
  door.AddRoute("GET", "/api/ps",
                [&door, &router](const HttpRequest&, HttpResponse& res, RequestContext&) {
                  OllamaJson(res, OllamaPs(router.Snapshot(), *door.routing().config(), UnixNow(),
                                           std::chrono::steady_clock::now()));
                });
  door.AddRoute("POST", "/api/show",
                [&door](const HttpRequest& req, HttpResponse& res, RequestContext&) {
                  std::optional<json> body = OllamaBody(req, res);
                  if (!body) return;
                  // "name" is the older clients' field.
                  const json& given =
                      body->contains("model") ? (*body)["model"] : body->value("name", json());
                  if (!given.is_string() || given == "") {
                    return OllamaError(res, 400, "model is required");
                  }
                  const std::string name = given.get<std::string>();
                  std::optional<OllamaTarget> target = ResolveOllamaName(door, name);
                  if (!target) return OllamaError(res, 404, "model \"" + name + "\" not found");
                  OllamaJson(res, OllamaShow(target->where.to.model));
                });
  const std::pair<const char*, OllamaKind> calls[] = {{"/api/chat", OllamaKind::kChat},
                                                      {"/api/generate", OllamaKind::kGenerate},
                                                      {"/api/embed", OllamaKind::kEmbed},
                                                      {"/api/embeddings", OllamaKind::kEmbeddings}};
  for (const auto& [path, kind] : calls) {
    door.AddRoute("POST", path,
                  [&door, &router, kind = kind](const HttpRequest& req, HttpResponse& res,
                                                RequestContext& ctx) {
                    HandleOllamaCall(door, router, kind, req, res, ctx);
                  });
  }
  AddModelFileRoutes(door);
}

}  // namespace swapd
