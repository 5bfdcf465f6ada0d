#include "scoreboard/bench_command.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include "base/json_text.h"
#include "config/env_macros.h"
#include "config/loader.h"
#include "config/store_settings.h"
#include "scoreboard/bench_client.h"
#include "scoreboard/bench_runner.h"
#include "scoreboard/bench_store.h"
#include "scoreboard/gates.h"
#include "scoreboard/machine_info.h"
#include "scoreboard/own_server.h"
#include "scoreboard/report.h"
#include "scoreboard/router_compare.h"

namespace swapd {
namespace {

constexpr auto kOwnSwapdStart = std::chrono::seconds(60);
constexpr int kUsage = 2;
constexpr int kFailed = 1;

// The config of --config FILE, as swapd loads it.
Result<Config> BenchConfig(const std::string& path) {
  LoadOptions lo;
  lo.config_path = path;
  lo.getenv = ProcessEnv;
  LoadResult loaded = LoadConfig(lo);
  if (!loaded.ok()) {
    return Status::Error(ErrorCode::kInvalidArgument,
                         "the config does not load:\n" + loaded.ErrorText());
  }
  return std::move(*loaded.config);
}

// Where the rows are kept: --store, else the config's store.path (with --config), else swapd's
// default store. "" = nowhere (--store none, or the config's `store: none`).
Result<std::string> StorePath(const BenchOptions& o) {
  if (o.store == "none") return std::string();
  if (!o.store.empty()) return o.store;
  if (!o.config_path.empty()) {
    Result<Config> config = BenchConfig(o.config_path);
    if (!config.ok()) return config.status();
    return config.value().store_path;
  }
  return DefaultStorePath(ProcessEnv);
}

// The built-in gates and those of every --gates file; every file's problems are reported.
Result<std::vector<Gate>> GatesFor(const BenchOptions& o) {
  std::vector<Gate> gates;
  if (!o.gates) return gates;
  gates = BuiltInGates();
  std::string errors;
  for (const std::string& file : o.gate_files) {
    Result<std::vector<Gate>> more = LoadGateFile(file);
    if (!more.ok()) {
      errors += (errors.empty() ? "" : "\n") + more.status().message();
      continue;
    }
    gates.insert(gates.end(), more.value().begin(), more.value().end());
  }
  if (!errors.empty()) return Status::Error(ErrorCode::kInvalidArgument, errors);
  return gates;
}

// Stores every row and, when comparing, finds each one's previous run. A store that fails is
// reported and the bench's results are still printed.
void StoreRows(const std::string& path, const std::string& machine, bool compare,
               ReportInput& report, std::ostream& err) {
  if (compare) report.previous.assign(report.rows.size(), std::nullopt);
  if (path.empty()) return;
  Result<std::unique_ptr<BenchStore>> store = BenchStore::Open(path);
  if (!store.ok()) {
    err << "swapd bench: results not stored: " << store.status().message() << "\n";
    return;
  }
  for (size_t i = 0; i < report.rows.size(); ++i) {
    Result<int64_t> id = store.value()->Record(report.rows[i], machine);
    if (!id.ok()) {
      err << "swapd bench: a result was not stored: " << id.status().message() << "\n";
      continue;
    }
    if (!compare) continue;
    Result<std::optional<BenchStore::Stored>> before =
        store.value()->Previous(report.rows[i], id.value());
    if (!before.ok()) {
      err << "swapd bench: " << before.status().message() << "\n";
    } else if (before.value()) {
      report.previous[i] = before.value()->row;
    }
  }
  err << "swapd bench: results stored in " << path << "\n";
}

}  // namespace

bool IsLoopbackUrl(const std::string& url) {
  std::string host = url.substr(url.find("://") == std::string::npos ? 0 : url.find("://") + 3);
  host = host.substr(0, host.find('/'));
  if (!host.empty() && host.front() == '[') return host.rfind("[::1]", 0) == 0;
  host = host.substr(0, host.find(':'));
  return host == "localhost" || host.rfind("127.", 0) == 0;
}

int RunBench(const BenchOptions& o, std::ostream& out, std::ostream& err) {
  Result<std::vector<Gate>> gates = GatesFor(o);
  if (!gates.ok()) {
    err << "swapd bench: " << gates.status().message() << "\n";
    return kUsage;
  }
  Result<std::string> store_path = StorePath(o);
  if (!store_path.ok()) {
    err << "swapd bench: " << store_path.status().message() << "\n";
    return kFailed;
  }
  if (o.compare && store_path.value().empty()) {
    err << "swapd bench: --compare needs a store (not --store none, not `store: none`)\n";
    return kUsage;
  }

  BenchPlan plan;
  plan.models = o.models;
  plan.duos = o.duos;
  plan.swaps = o.swaps;
  plan.runs = o.runs;
  plan.prompt_tokens = o.prompt_tokens;
  plan.gen_tokens = o.gen_tokens;
  plan.gates = std::move(gates).value();
  plan.output_dir = o.output_dir;
  plan.strict = o.strict;
  plan.noise = o.noise;

  std::unique_ptr<OwnServer> own;
  std::string url = o.url;
  if (!o.config_path.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.output_dir, ec);
    const std::string log = (std::filesystem::path(o.output_dir) / "swapd.log").string();
    Result<std::unique_ptr<OwnServer>> started =
        OwnServer::StartSwapd(o.config_path, log, kOwnSwapdStart);
    if (!started.ok()) {
      err << "swapd bench: " << started.status().message() << "\n";
      return kFailed;
    }
    own = std::move(started).value();
    url = own->url();
    plan.own_pids.push_back(own->pid());
    err << "swapd bench: started swapd at " << url << " (pid " << own->pid() << ", log "
        << own->log_path() << ")\n";
  }
  const BenchClient client(url, o.api_key);
  if (!own) {
    Result<int> pid = client.DaemonPid();
    if (!pid.ok()) {
      err << "swapd bench: cannot use the swapd at " << url << ": " << pid.status().message()
          << "\n";
      return kFailed;
    }
    // Its process tree is the bench's own work, when it runs here.
    if (pid.value() > 0 && IsLoopbackUrl(url)) plan.own_pids.push_back(pid.value());
  }

  std::unique_ptr<OwnServer> router;
  if (!o.compare_router.empty()) {
    Result<Config> config = BenchConfig(o.config_path);
    Result<std::unique_ptr<OwnServer>> started =
        config.ok() ? StartRouter(o, config.value(), kOwnSwapdStart) : config.status();
    if (!started.ok()) {
      err << "swapd bench: --compare-router: " << started.status().message() << "\n";
      return kFailed;
    }
    router = std::move(started).value();
    plan.router_url = router->url();
    plan.own_pids.push_back(router->pid());
    err << "swapd bench: started llama.cpp's router at " << router->url() << " (pid "
        << router->pid() << ", log " << router->log_path() << ")\n";
  }

  BenchOutcome outcome = BenchRunner(client, std::move(plan), err).Run();
  if (router) router->Stop();
  if (own) own->Stop();

  ReportInput report;
  report.machine = MachineDescription();
  report.date = UtcMinute(std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count());
  report.rows = std::move(outcome.rows);
  report.compare = o.compare;
  StoreRows(store_path.value(), report.machine, o.compare, report, err);

  const std::string table = MarkdownScoreboard(report);
  if (o.json) {
    out << JsonText(JsonReport(report), 2) << "\n";
  } else {
    out << table;
  }
  if (!o.markdown_path.empty()) {
    std::ofstream file(o.markdown_path, std::ios::trunc);
    file << table;
    if (!file.good()) err << "swapd bench: cannot write " << o.markdown_path << "\n";
  }
  return BenchExitStatus(report.rows, outcome.refused);
}

}  // namespace swapd
