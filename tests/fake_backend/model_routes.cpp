// FakeServer's model routes: the three completion APIs (JSON or paced SSE), embeddings and audio
// transcriptions. Streams stop as soon as a write fails (the client went away) and are counted in
// /stats as completed or cancelled.
#include <algorithm>
#include <chrono>
#include <thread>

#include "tests/fake_backend/faults.h"
#include "tests/fake_backend/http_util.h"
#include "tests/fake_backend/log.h"
#include "tests/fake_backend/peer_watch.h"
#include "tests/fake_backend/server.h"

namespace fake_backend {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kEmbeddingSize = 16;
// A --crash-after stream dies after this many events, so the client has seen a few chunks.
constexpr size_t kCrashAfterEvents = 3;

// One streamed response: its pre-rendered events and the pacing of the token events.
struct StreamState {
  std::vector<std::string> events;  // each "data: ...\n\n"
  size_t first_token = 0;           // index of the first token event
  size_t token_count = 0;
  size_t next = 0;
  size_t crash_at = SIZE_MAX;  // index of the event that is never sent
  Clock::time_point start = Clock::now();
  std::chrono::microseconds interval{0};
};

std::string SseEvent(const std::string& data) { return "data: " + data + "\n\n"; }

// Parses a JSON body; on failure answers 400 the way an OpenAI server does and returns false.
bool ParseBody(const httplib::Request& req, httplib::Response& res, json* body) {
  *body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (body->is_discarded() || !body->is_object()) {
    SendError(res, 400, "Invalid request: the body is not a JSON object", "invalid_request_error");
    return false;
  }
  return true;
}

std::chrono::microseconds TokenInterval(double tokens_per_second) {
  if (tokens_per_second <= 0) return std::chrono::microseconds(0);
  return std::chrono::microseconds(static_cast<long long>(1e6 / tokens_per_second));
}

}  // namespace

void FakeServer::HandleCompletion(const httplib::Request& req, httplib::Response& res,
                                  CompletionApi api, bool crash) {
  json body;
  if (!ParseBody(req, res, &body)) {
    if (crash) Crash("invalid completion request");
    return;
  }
  CompletionJob job;
  std::string error;
  if (!ParseCompletionJob(body, api, options_, &job, &error)) {
    if (crash) Crash("invalid completion request");
    SendError(res, 400, error, "invalid_request_error");
    return;
  }
  // The slot's prompt cache: only the tokens it did not hold yet are processed.
  const int id_slot = body.contains("id_slot") && body["id_slot"].is_number_integer()
                          ? body["id_slot"].get<int>()
                          : -1;
  int cached = slots_.Use(Words(job.prompt), job.tokens, id_slot);
  // `cache_prompt: false`: llama-server processes the whole prompt (the slot then holds it).
  if (body.contains("cache_prompt") && body["cache_prompt"] == false) cached = 0;
  job.timings.cache_n = cached;
  job.timings.prompt_n -= cached;
  job.timings.prompt_ms = job.timings.prompt_n * job.timings.prompt_per_token_ms;
  if (job.stream) {
    StartStream(res, std::move(job), crash);
    return;
  }
  if (crash) Crash("completion request");
  const auto interval = TokenInterval(options_.tokens_per_second);
  if (interval.count() > 0) {
    // Generates at the given pace and, like llama-server, gives up once the client has gone.
    const auto done =
        std::chrono::steady_clock::now() + interval * static_cast<long long>(job.tokens.size());
    const swapd::PeerWatch peer(req.remote_port);
    ++active_requests_;
    while (std::chrono::steady_clock::now() < done) {
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          std::chrono::milliseconds(20), done - std::chrono::steady_clock::now()));
      if (peer.Closed()) {
        --active_requests_;
        ++cancelled_requests_;
        LogLine("srv  cancel_tasks: request cancelled, the client went away");
        return;
      }
    }
    --active_requests_;
  }
  SendJson(res, 200, CompletionResponse(job));
}

void FakeServer::StartStream(httplib::Response& res, CompletionJob job, bool crash) {
  auto state = std::make_shared<StreamState>();
  for (const json& event : OpeningEvents(job)) state->events.push_back(SseEvent(Dump(event)));
  state->first_token = state->events.size();
  state->token_count = job.tokens.size();
  for (size_t i = 0; i < job.tokens.size(); ++i) {
    state->events.push_back(SseEvent(Dump(TokenEvent(job, i))));
  }
  for (const json& event : ClosingEvents(job)) state->events.push_back(SseEvent(Dump(event)));
  if (SendsDone(job)) state->events.push_back(SseEvent("[DONE]"));
  if (crash) state->crash_at = std::min(kCrashAfterEvents, state->events.size() - 1);
  state->interval = TokenInterval(options_.tokens_per_second);

  ++active_streams_;
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, state](size_t /*offset*/, httplib::DataSink& sink) {
        if (state->next == state->crash_at) Crash("streamed request, mid-stream");
        if (options_.hang_mid_stream > 0 &&
            state->next == static_cast<size_t>(options_.hang_mid_stream)) {
          HangStream(sink);
          return false;
        }
        const size_t i = state->next;
        if (i >= state->first_token && i < state->first_token + state->token_count) {
          const auto tokens_due = static_cast<long long>(i - state->first_token + 1);
          std::this_thread::sleep_until(state->start + state->interval * tokens_due);
        }
        const std::string& event = state->events[i];
        if (!sink.write(event.data(), event.size())) return false;  // the client went away
        if (++state->next == state->events.size()) sink.done();
        return true;
      },
      [this](bool success) {
        --active_streams_;
        if (success) {
          ++completed_streams_;
        } else {
          ++cancelled_streams_;
          LogLine("srv  cancel_tasks: stream cancelled, the client went away");
        }
      });
}

void FakeServer::HandleEmbeddings(const httplib::Request& req, httplib::Response& res) {
  json body;
  if (!ParseBody(req, res, &body)) return;
  if (!body.contains("input") || body["input"].is_null()) {
    SendError(res, 400, "\"input\" must be provided", "invalid_request_error");
    return;
  }
  std::vector<std::string> inputs;
  const json& input = body["input"];
  if (input.is_array() && !input.empty() && !input[0].is_number()) {
    for (const json& item : input)
      inputs.push_back(item.is_string() ? item.get<std::string>() : item.dump());
  } else {
    inputs.push_back(input.is_string() ? input.get<std::string>() : input.dump());
  }
  const bool base64 = body.value("encoding_format", std::string("float")) == "base64";
  json data = json::array();
  int prompt_tokens = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    prompt_tokens += CountWords(inputs[i]);
    std::vector<float> embedding = EmbeddingFor(inputs[i], kEmbeddingSize);
    json item = {{"index", i}, {"object", "embedding"}};
    if (base64) {
      item["embedding"] = Base64OfFloats(embedding);
    } else {
      item["embedding"] = embedding;
    }
    data.push_back(item);
  }
  std::string model = options_.ModelId();
  if (body.contains("model") && body["model"].is_string()) model = body["model"].get<std::string>();
  SendJson(res, 200,
           {{"model", model},
            {"object", "list"},
            {"usage", {{"prompt_tokens", prompt_tokens}, {"total_tokens", prompt_tokens}}},
            {"data", data}});
}

void FakeServer::HandleTranscription(const httplib::Request& req, httplib::Response& res) {
  if (!req.is_multipart_form_data() || !req.has_file("file")) {
    SendError(res, 400, "a multipart/form-data body with a 'file' part is required",
              "invalid_request_error");
    return;
  }
  const httplib::MultipartFormData file = req.get_file_value("file");
  std::string text;
  for (const std::string& token : GenerateTokens(file.content, 8)) text += token;
  const std::string model =
      req.has_file("model") ? req.get_file_value("model").content : options_.ModelId();
  SendJson(res, 200, {{"text", text}, {"model", model}});
}

}  // namespace fake_backend
