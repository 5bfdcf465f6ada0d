// control-bench: what the control plane costs a request.
//  1. Activity: recording a request's row (ActivityEntryOf + ActivityLog::Record, which is all a
//     request pays: the row is written by the log's own thread), per call, with the writer
//     writing to a SQLite file meanwhile; and how fast that writer empties its queue.
//  2. Events: publishing one logData event to /api/events readers (EventHub::Publish renders the
//     frame once and queues it for each reader), with 0 and with 50 readers taking their frames
//     on their own threads, as the streams do.
// Results are for bench/README.md, section "Control plane".
// Usage: control-bench [rows=100000] [events=100000]
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "observe/event_hub.h"
#include "store/activity_log.h"

namespace {

using namespace swapd;
using Clock = std::chrono::steady_clock;

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

void Activity(int rows) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("control-bench-" + std::to_string(getpid()) + ".db"))
                               .string();
  auto store = ActivityStore::Open(path);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().message().c_str());
    std::exit(1);
  }
  std::vector<double> per_call;
  per_call.reserve(static_cast<size_t>(rows));
  ProxyRecord record;
  record.model_id = "qwen3-coder-30b";
  record.route = record.path = "/v1/chat/completions";
  record.status = 200;
  record.content_type = "text/event-stream";
  record.usage.prompt_tokens = 1200;
  record.usage.completion_tokens = 300;
  record.usage.predicted_per_second = 42.5;
  record.duration = std::chrono::milliseconds(7000);
  Clock::time_point written;
  {
    ActivityLog log(std::move(store).value(), nullptr);
    const auto began = Clock::now();
    for (int i = 0; i < rows; ++i) {
      const auto t = Clock::now();
      log.Record(ActivityEntryOf(record));
      per_call.push_back(Micros(Clock::now() - t));
      // At most a few thousand requests a second reach a local model: pace like a busy server,
      // so that the queue (10000) measures the writer, not a burst no client sends.
      if (i % 1000 == 999) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    log.Flush();
    written = Clock::now();
    const double seconds = std::chrono::duration<double>(written - began).count();
    std::printf(
        "activity: Record p50 %.2f us, p99 %.2f us, max %.1f us; %d rows written in %.2f s "
        "(%.0f rows/s, paced); dropped %llu, failed %llu\n",
        Percentile(per_call, 0.5), Percentile(per_call, 0.99), Percentile(per_call, 1.0), rows,
        seconds, rows / seconds, static_cast<unsigned long long>(log.dropped()),
        static_cast<unsigned long long>(log.failed()));
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

void Events(int events, int readers) {
  EventHub hub;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> taken{0};
  std::atomic<uint64_t> bytes{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < readers; ++r) {
    threads.emplace_back([&, subscription = hub.Subscribe()]() {
      while (!stop) {
        EventHub::Subscription::Batch batch = subscription->Next(std::chrono::milliseconds(50));
        for (const EventFrame& f : batch.frames) bytes += f->size();  // as a write would read it
        taken += batch.frames.size();
      }
    });
  }
  const std::string line =
      "srv  log_server_r: request: POST /v1/chat/completions 127.0.0.1 200 (a typical line)";
  std::vector<double> per_call;
  per_call.reserve(static_cast<size_t>(events));
  for (int i = 0; i < events; ++i) {
    const auto t = Clock::now();
    hub.Publish("logData", {{"source", "upstream"}, {"data", "[qwen] " + line + "\n"}});
    per_call.push_back(Micros(Clock::now() - t));
    if (i % 1000 == 999) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stop = true;
  for (auto& t : threads) t.join();
  std::printf(
      "events: %d readers: Publish p50 %.2f us, p99 %.2f us; frames taken %llu (%llu "
      "bytes), dropped %llu\n",
      readers, Percentile(per_call, 0.5), Percentile(per_call, 0.99),
      static_cast<unsigned long long>(taken.load()), static_cast<unsigned long long>(bytes.load()),
      static_cast<unsigned long long>(hub.dropped()));
}

}  // namespace

int main(int argc, char** argv) {
  const int rows = argc > 1 ? std::atoi(argv[1]) : 100000;
  const int events = argc > 2 ? std::atoi(argv[2]) : 100000;
  Activity(rows);
  Events(events, 0);
  Events(events, 50);
  return 0;
}
