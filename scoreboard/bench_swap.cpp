// BenchRunner's swaps (`swapd bench --swap A,B`): with the partner loaded, the model's files are
// made cold (dropped from the page cache) or warm (read into it), then one streamed request for
// the model is timed to its first token: the partner's stop, the model's start and the prompt, as
// a client waits for them. swapd's own measure of the start (GET /api/models last_load_seconds),
// the bytes read from the disks meanwhile and the share of the files cached as the request went
// out complete each run. The page cache is the machine's: the bench must run where swapd runs.
// With --compare-router the same swaps go through llama.cpp's router (rows `via` it): the partner
// is loaded by a request for it, and the router reports no load time. A model with a slot cache
// gets two more rows through swapd, files warm: a long conversation asked before the swap and
// again after it, its restored slot used ("slot") or ignored ("no slot": cache_prompt false).
#include <algorithm>

#include "base/text.h"
#include "base/unix_time.h"
#include "memory/memory_meter.h"
#include "memory/page_prefetch.h"
#include "scoreboard/bench_runner.h"

namespace swapd {
namespace {

// A drop that leaves more than this share cached is reported: something maps the files.
constexpr double kStayedCachedShare = 0.05;
constexpr int kSwapPromptTokens = 16;
constexpr int kSwapGenTokens = 4;
// The conversation a slot row primes before the swap and asks again after it.
constexpr int kSlotPromptTokens = 512;
constexpr const char* kViaRouter = "llama.cpp router";

// The share (0..1) of the files' bytes in the page cache; -1 when it cannot be measured.
double CachedShare(const FileCache& cache) {
  if (cache.bytes <= 0 || cache.unmeasured > 0) return -1;
  return static_cast<double>(cache.cached) / static_cast<double>(cache.bytes);
}

std::string MiB(double bytes) { return FixedPoint(bytes / (1 << 20), 1) + " MiB"; }

void AddDetail(BenchRow& row, const std::string& detail) {
  if (row.detail.find(detail) != std::string::npos) return;
  row.detail += (row.detail.empty() ? "" : "; ") + detail;
}

// The request each swap is timed by (and, with `max_tokens` 1, the router's way to load a model).
// `prompt_tokens`: the synthetic prompt's length; `cache_prompt`: the backend may reuse its slot.
nlohmann::json SwapRequest(const std::string& model, int run, int max_tokens,
                           int prompt_tokens = kSwapPromptTokens, bool cache_prompt = false) {
  return {{"model", model},
          {"messages", {{{"role", "user"}, {"content", SyntheticPrompt(run, prompt_tokens)}}}},
          {"stream", true},
          {"temperature", 0},
          {"max_tokens", max_tokens},
          {"cache_prompt", cache_prompt}};
}

bool IsSlotRow(const std::string& cache) { return cache == "slot" || cache == "no slot"; }

// Why a streamed answer failed; "" when it did not.
std::string AnswerFailure(const Result<ChatStreamStats>& answer) {
  if (!answer.ok()) return answer.status().message();
  if (!answer.value().error.empty()) return answer.value().error;
  return answer.value().pieces == 0 ? "the answer had no tokens" : "";
}

}  // namespace

bool BenchRunner::HasSlotCache(const std::string& model) const {
  Result<std::vector<ModelState>> models = client_.Models();
  const ModelState* m = models.ok() ? FindModelState(models.value(), model) : nullptr;
  return m != nullptr && m->slot_cache;
}

bool BenchRunner::LoadPartner(BenchRow& row, const BenchClient* router) {
  if (router != nullptr) {
    const std::string why = AnswerFailure(router->StreamChat(SwapRequest(row.partner, 0, 1)));
    if (!why.empty())
      row.error = "partner " + row.partner + " did not answer through the router: " + why;
    return why.empty();
  }
  BenchRow partner;
  partner.model = row.partner;
  if (!LoadCold(partner, /*unload_first=*/true)) {
    row.error = "partner " + row.partner + " did not load: " + partner.error;
    return false;
  }
  return true;
}

BenchRow BenchRunner::Swap(const std::string& model, const std::string& partner,
                           const std::string& cache, const BenchClient* router) {
  BenchRow row;
  row.model = model;
  row.mode = "swap";
  row.partner = partner;
  row.cache = cache;
  if (router != nullptr) row.via = kViaRouter;
  row.config_hash = ConfigHash(model);
  auto failed = [&row](const std::string& error) {
    row.error = error;
    row.finished_at = UnixNow();
    return row;
  };
  Result<std::vector<ModelState>> models = client_.Models();
  if (!models.ok()) return failed(models.status().message());
  const ModelState* m = FindModelState(models.value(), model);
  if (m == nullptr) return failed("not a model of this swapd's config (GET /api/models)");
  if (FindModelState(models.value(), partner) == nullptr) {
    return failed("partner " + partner + " is not a model of this swapd's config");
  }
  const std::vector<std::string> files = m->files;
  if (files.empty()) {
    return failed("no model files to make " + cache +
                  ": its cmd names none (-m/--model or a .gguf path)");
  }
  const FileCache present = FilesInPageCache(files);
  if (present.missing == static_cast<int>(files.size())) {
    return failed("its model files are not on this machine (" + files.front() +
                  "): run the bench where swapd runs");
  }
  if (present.unmeasured > 0) {
    AddDetail(row,
              "the page cache of its files cannot be measured here (mincore needs the "
              "right to write them)");
  }
  if (m->prefetch) AddDetail(row, "prefetch on");
  Say(model + ": swaps from " + partner + ", its files " + cache +
      (router != nullptr ? " (through llama.cpp's router)" : ""));
  if (!CheckQuiet({&row})) {  // --strict on a busy machine: row.error says so
    row.finished_at = UnixNow();
    return row;
  }
  std::vector<double> ttft, load, read, cached;
  for (int run = 1; run <= plan_.runs; ++run) {
    if (!SwapOnce(row, files, run, router, ttft, load, read, cached)) break;
  }
  row.ttft_ms = MedianOfKnown(ttft);
  row.load_seconds = MedianOfKnown(load);
  const double read_bytes = MedianOfKnown(read);
  row.disk_read_bytes = read_bytes < 0 ? -1 : static_cast<int64_t>(read_bytes);
  row.page_cache_before = MedianOfKnown(cached);
  row.finished_at = UnixNow();
  return row;
}

bool BenchRunner::SwapOnce(BenchRow& row, const std::vector<std::string>& files, int run,
                           const BenchClient* router, std::vector<double>& ttft,
                           std::vector<double>& load, std::vector<double>& read,
                           std::vector<double>& cached) {
  const bool slot_row = IsSlotRow(row.cache);
  if (slot_row) {
    // The conversation first: the model's slot holds it when the partner's load stops the model,
    // which saves the slot; the model's next start restores it.
    const std::string why = AnswerFailure(client_.StreamChat(
        SwapRequest(row.model, run, 1, kSlotPromptTokens, /*cache_prompt=*/true)));
    if (!why.empty()) {
      row.error = "the conversation before swap " + std::to_string(run) + ": " + why;
      return false;
    }
  }
  if (!LoadPartner(row, router)) return false;
  if (row.cache == "cold") {
    const double stayed = CachedShare(DropFromPageCache(files));
    if (stayed > kStayedCachedShare) {
      AddDetail(row, FixedPoint(stayed * 100, 0) +
                         "% stayed in the page cache after the drop (a running process maps "
                         "the files)");
    }
  } else {
    const PrefetchResult warmed =
        PrefetchFiles(files, std::max<int64_t>(MemAvailableBytes() - kPrefetchReserve, 0));
    if (!warmed.error.empty()) {
      row.error = "reading its files into the page cache: " + warmed.error;
      return false;
    }
    if (warmed.truncated) {
      AddDetail(row, "its files do not all fit in the page cache beside " + row.partner);
    }
  }
  const double share = CachedShare(FilesInPageCache(files));
  const uint64_t disk_before = DiskReadBytes();
  const BenchClient& via = router != nullptr ? *router : client_;
  Result<ChatStreamStats> answer = via.StreamChat(
      SwapRequest(row.model, run, kSwapGenTokens, slot_row ? kSlotPromptTokens : kSwapPromptTokens,
                  /*cache_prompt=*/row.cache == "slot"));
  const uint64_t disk_after = DiskReadBytes();
  if (const std::string why = AnswerFailure(answer); !why.empty()) {
    row.error = "swap " + std::to_string(run) + ": " + why;
    Say(row.model + ": " + row.error);
    return false;
  }
  double load_seconds = -1;  // the router does not say
  bool partner_stayed = false;
  if (router == nullptr) {
    Result<std::vector<ModelState>> now = client_.Models();
    const ModelState* model = now.ok() ? FindModelState(now.value(), row.model) : nullptr;
    const ModelState* other = now.ok() ? FindModelState(now.value(), row.partner) : nullptr;
    if (model != nullptr) load_seconds = model->last_load_seconds;
    partner_stayed = other != nullptr && other->state == "ready";
  } else {
    Result<nlohmann::json> other = router->ListEntry(row.partner);
    partner_stayed =
        other.ok() && other.value().is_object() &&
        other.value().value("status", nlohmann::json::object()).value("value", "") == "loaded";
  }
  if (partner_stayed) {
    row.error = row.partner + " stayed loaded: the two may run together, so there was no swap";
    return false;
  }
  if (slot_row && row.runs == 0 && answer.value().timings_cache_n >= 0 &&
      answer.value().timings_prompt_n >= 0) {
    const ChatStreamStats& s = answer.value();
    AddDetail(row, std::to_string(s.timings_cache_n) + " of " +
                       std::to_string(s.timings_cache_n + s.timings_prompt_n) +
                       " prompt tokens from the restored slot");
  }
  ttft.push_back(answer.value().first_piece_ms);
  load.push_back(load_seconds);
  read.push_back(static_cast<double>(disk_after > disk_before ? disk_after - disk_before : 0));
  cached.push_back(share);
  ++row.runs;
  Say(row.model + ": swap " + std::to_string(run) + "/" + std::to_string(plan_.runs) + " from " +
      row.partner + " (" + row.cache +
      (share >= 0 ? ", " + FixedPoint(share * 100, 0) + "% cached" : std::string()) + "): TTFT " +
      FixedPoint(ttft.back(), 0) + " ms, load " + FixedPoint(load.back(), 2) + " s, read " +
      MiB(read.back()));
  return true;
}

}  // namespace swapd
