// LoadOutputParser and EstimateLoad on the shapes of llama-server's start-up output: the model
// loader's metadata, the tensor loader's lines and its progress dots (one per percent, the line
// ended only at 100%), the context, the warm-up and the "model loaded" line; and a backend that
// prints nothing of it.
#include <catch2/catch.hpp>
#include <string>

#include "backends/load_progress.h"
#include "backends/log_ring.h"

namespace swapd {
namespace {

using namespace std::chrono_literals;

// A llama-server start as it reaches swapd, up to the dots (abridged; the words follow
// llama.cpp's loader and server).
const char* const kHead[] = {
    "build: 6500 (abcdef12) with cc (Debian 12.2.0-14) 12.2.0 for x86_64-linux-gnu",
    "system info: n_threads = 8, n_threads_batch = 8, total_threads = 16",
    "main: HTTP server is listening, hostname: 127.0.0.1, port: 5800, http threads: 15",
    "main: loading model",
    "srv    load_model: loading model '/models/qwen3-4b-q4_k_m.gguf'",
    "llama_model_loader: loaded meta data with 36 key-value pairs and 398 tensors from "
    "/models/qwen3-4b-q4_k_m.gguf (version GGUF V3 (latest))",
    "llama_model_loader: - kv   0:                       general.architecture str              = "
    "qwen3",
    "llama_model_loader: - type  f32:  145 tensors",
    "print_info: file format = GGUF V3 (latest)",
    "print_info: n_ctx_train      = 40960",
    "load: special tokens cache size = 26",
    "load_tensors: loading model tensors, this can take a while... (mmap = true)",
    "load_tensors: offloading 36 repeating layers to GPU",
    "load_tensors:   CPU_Mapped model buffer size =  2375.94 MiB",
};

TEST_CASE("LoadOutputParser: llama-server's stages in order, the dots as percents",
          "[unit][loadprogress]") {
  LoadOutputParser p;
  CHECK(p.progress().stage == LoadStage::kProcess);
  CHECK_FALSE(p.progress().fraction);
  // "HTTP server is listening" comes before the load: not ready.
  for (int i = 0; i < 4; ++i) p.Line(kHead[i]);
  CHECK(p.progress().stage == LoadStage::kProcess);
  for (int i = 4; i < 11; ++i) p.Line(kHead[i]);
  CHECK(p.progress().stage == LoadStage::kMetadata);
  const double metadata = *p.progress().fraction;
  CHECK(metadata > 0.0);
  for (int i = 11; i < 14; ++i) p.Line(kHead[i]);
  CHECK(p.progress().stage == LoadStage::kTensors);
  const double tensors = *p.progress().fraction;
  CHECK(tensors > metadata);

  // The dots' line grows with no newline: each partial look counts them.
  p.Partial(std::string(10, '.'));
  const double ten = *p.progress().fraction;
  p.Partial(std::string(50, '.'));
  const double fifty = *p.progress().fraction;
  CHECK(ten > tensors);
  CHECK(fifty > ten);
  p.Partial(std::string(40, '.'));  // never backwards
  CHECK(*p.progress().fraction == Approx(fifty));
  p.Line(std::string(100, '.'));  // 100%: the newline
  const double all = *p.progress().fraction;
  CHECK(all > fifty);
  CHECK(p.progress().stage == LoadStage::kTensors);

  p.Line("llama_context: constructing llama_context");
  p.Line("llama_context: n_ctx         = 4096");
  p.Line("llama_kv_cache:        CPU KV buffer size =   576.00 MiB");
  CHECK(p.progress().stage == LoadStage::kContext);
  CHECK(*p.progress().fraction > all);
  p.Line(
      "common_init_from_params: warming up the model with an empty run - please wait ... "
      "(--no-warmup to disable)");
  CHECK(p.progress().stage == LoadStage::kWarmup);
  p.Line("srv          init: initializing slots, n_slots = 1");
  p.Line("main: model loaded");
  CHECK(p.progress().stage == LoadStage::kReady);
  CHECK(*p.progress().fraction == 1.0);
  // Later loader lines (a draft model, an mmproj) do not move it back.
  p.Line("llama_model_loader: loaded meta data with 20 key-value pairs and 10 tensors");
  CHECK(p.progress().stage == LoadStage::kReady);
  CHECK(std::string(ToString(LoadStage::kTensors)) == "tensors");
}

TEST_CASE("LoadOutputParser: a log line that lands inside the dots' line", "[unit][loadprogress]") {
  LoadOutputParser p;
  p.Line("load_tensors: loading model tensors, this can take a while... (mmap = true)");
  p.Partial(std::string(30, '.'));
  p.Line(std::string(30, '.') + "srv  log_server_r: request: GET /v1/models 127.0.0.1 200");
  p.Partial(std::string(20, '.'));  // 50% in all
  LoadOutputParser fifty;
  fifty.Line("load_tensors: x");
  fifty.Partial(std::string(50, '.'));
  CHECK(*p.progress().fraction == Approx(*fifty.progress().fraction));
  p.Line(std::string(70, '.'));
  fifty.Line(std::string(100, '.'));
  CHECK(*p.progress().fraction == Approx(*fifty.progress().fraction));
  // Text that merely starts with a dot outside the tensors' stage does not count.
  LoadOutputParser other;
  other.Line("llama_context: n_ctx = 4096");
  other.Line("...");
  CHECK(other.progress().stage == LoadStage::kContext);
}

TEST_CASE("LoadOutputParser: older llama.cpp names and the main loop line",
          "[unit][loadprogress]") {
  LoadOutputParser p;
  p.Line("llm_load_print_meta: format           = GGUF V3 (latest)");
  CHECK(p.progress().stage == LoadStage::kMetadata);
  p.Line("llm_load_tensors: ggml ctx size =    0.14 MiB");
  CHECK(p.progress().stage == LoadStage::kTensors);
  p.Line("llama_new_context_with_model: n_ctx      = 512");
  CHECK(p.progress().stage == LoadStage::kContext);
  p.Line("main: server is listening on http://127.0.0.1:5800 - starting the main loop");
  CHECK(p.progress().stage == LoadStage::kReady);
}

TEST_CASE("LoadOutputParser: llama.cpp's 2026 log lines, with time and level, at either verbosity",
          "[unit][loadprogress]") {
  // Lines of a real llama-server (b12074) loading a small GGUF, at the default verbosity:
  LoadOutputParser quiet;
  quiet.Line("0.00.002.454 I cmn  common_param: common_params_print_info: verbosity = 3");
  CHECK(quiet.progress().stage == LoadStage::kProcess);
  quiet.Line("0.00.004.235 I srv    load_model: loading model 'models/tiny-a.gguf'");
  CHECK(quiet.progress().stage == LoadStage::kMetadata);
  quiet.Line(
      "0.00.213.271 I srv    load_model: initializing, n_slots = 4, n_ctx_slot = 4096, "
      "kv_unified = 'true'");
  CHECK(quiet.progress().stage == LoadStage::kContext);
  quiet.Line("0.00.215.478 I srv  llama_server: model loaded");
  CHECK(quiet.progress().stage == LoadStage::kReady);
  CHECK(quiet.progress().fraction == 1.0);

  // and with -lv 4, the loader's own lines behind the same prefix:
  LoadOutputParser verbose;
  verbose.Line(
      "0.00.045.040 I llama_model_loader: loaded meta data with 23 key-value pairs and 75 tensors");
  CHECK(verbose.progress().stage == LoadStage::kMetadata);
  verbose.Line("0.00.071.357 I load_tensors: loading model tensors, this can take a while...");
  CHECK(verbose.progress().stage == LoadStage::kTensors);
  verbose.Line("0.00.123.523 I llama_context: constructing llama_context");
  CHECK(verbose.progress().stage == LoadStage::kContext);

  // A line that only looks like a prefix is left alone.
  LoadOutputParser other;
  other.Line("12 I load_tensors: not a time");
  CHECK(other.progress().stage == LoadStage::kProcess);
}

TEST_CASE("LoadOutputParser: a backend that prints nothing it knows", "[unit][loadprogress]") {
  LoadOutputParser p;
  p.Line("INFO 12-06 00:10:00 api_server.py:585] vLLM API server version 0.6.3");
  p.Line("INFO:     Started server process [1234]");
  p.Partial("Loading safetensors checkpoint shards:  50% Completed | 1/2");
  CHECK(p.progress().stage == LoadStage::kProcess);
  CHECK_FALSE(p.progress().fraction);
}

TEST_CASE("LoadWatch: parses only while a start goes on, afresh at each", "[unit][loadprogress]") {
  LoadWatch watch;
  watch.Line("load_tensors: before any start");
  CHECK(watch.Progress().stage == LoadStage::kProcess);
  watch.Begin();
  watch.Line("load_tensors: x");
  watch.Partial("....");
  CHECK(watch.Progress().stage == LoadStage::kTensors);
  watch.End();
  watch.Line("llama_context: after it");
  CHECK(watch.Progress().stage == LoadStage::kTensors);
  watch.Begin();
  CHECK(watch.Progress().stage == LoadStage::kProcess);
  CHECK_FALSE(watch.Progress().fraction);
}

TEST_CASE("LineSplitter: the partial line is told as it grows, whole lines once",
          "[unit][loadprogress]") {
  std::vector<std::string> lines, partials;
  LineSplitter s([&](std::string_view l) { lines.emplace_back(l); });
  s.SetPartialFn([&](std::string_view l) { partials.emplace_back(l); });
  s.Feed("load_tensors: x\n...");
  s.Feed("..");
  s.Feed("...\nllama_context: y\n");
  CHECK(lines == std::vector<std::string>{"load_tensors: x", "........", "llama_context: y"});
  CHECK(partials == std::vector<std::string>{"...", "....."});
}

TEST_CASE("EstimateLoad: history alone, output alone, both", "[unit][loadprogress]") {
  LoadProgress nothing;
  // Nothing known: nothing told.
  LoadEstimate none = EstimateLoad(nothing, 2000ms, std::nullopt);
  CHECK_FALSE(none.progress);
  CHECK_FALSE(none.eta_seconds);
  // Time against the expected load (a backend that prints nothing parseable).
  LoadEstimate by_time = EstimateLoad(nothing, 2000ms, 8000ms);
  CHECK(*by_time.progress == Approx(0.25));
  CHECK(*by_time.eta_seconds == Approx(6.0));
  // Late: capped below 1, no negative ETA.
  LoadEstimate late = EstimateLoad(nothing, 9000ms, 8000ms);
  CHECK(*late.progress < 1.0);
  CHECK(*late.eta_seconds == 0.0);

  // Output alone: the rate so far, once past the first percents.
  LoadProgress half{LoadStage::kTensors, 0.5};
  LoadEstimate by_rate = EstimateLoad(half, 4000ms, std::nullopt);
  CHECK(*by_rate.progress == Approx(0.5));
  CHECK(*by_rate.eta_seconds == Approx(4.0));
  LoadProgress early{LoadStage::kMetadata, 0.02};
  LoadEstimate too_early = EstimateLoad(early, 100ms, std::nullopt);
  CHECK(*too_early.progress == Approx(0.02));
  CHECK_FALSE(too_early.eta_seconds);  // 100 ms for 2% says nothing yet
  // With history too: between the two, nearer the rate as the share grows.
  LoadEstimate both = EstimateLoad(half, 4000ms, 10000ms);
  CHECK(*both.eta_seconds > 4.0);
  CHECK(*both.eta_seconds < 6.0);
  CHECK(*EstimateLoad(early, 100ms, 10000ms).eta_seconds == Approx(9.9));

  LoadProgress ready{LoadStage::kReady, 1.0};
  // Parsed ready is not yet the probe's ready: a start under way never says done.
  LoadEstimate parsed_ready = EstimateLoad(ready, 100ms, std::nullopt);
  CHECK(*parsed_ready.progress < 1.0);
  CHECK(std::string(parsed_ready.stage) == "warmup");
  CHECK(*parsed_ready.eta_seconds == 0.0);
  CHECK(std::string(EstimateLoad(half, 4000ms, std::nullopt).stage) == "tensors");
  CHECK(std::string(EstimateLoad(nothing, 10ms, std::nullopt).stage) == "starting");
}

}  // namespace
}  // namespace swapd
