#include "scoreboard/bench_result.h"

#include <algorithm>

namespace swapd {

bool BenchRow::gates_passed() const {
  return std::all_of(gates.begin(), gates.end(), [](const GateOutcome& g) { return g.passed; });
}

nlohmann::json ToJson(const BenchRow& row) {
  nlohmann::json gates = nlohmann::json::array();
  for (const GateOutcome& g : row.gates) {
    gates.push_back({{"gate", g.gate},
                     {"passed", g.passed},
                     {"reason", g.reason},
                     {"output_path", g.output_path}});
  }
  return {{"model", row.model},
          {"mode", row.mode},
          {"partner", row.partner},
          {"config_hash", row.config_hash},
          {"runs", row.runs},
          {"load_seconds", row.load_seconds},
          {"ttft_ms", row.ttft_ms},
          {"prefill_tps", row.prefill_tps},
          {"decode_tps", row.decode_tps},
          {"tps_source", row.tps_source},
          {"gates", std::move(gates)},
          {"gates_passed", row.gates_passed()},
          {"noisy", row.noisy},
          {"noise", row.noise},
          {"error", row.error},
          {"cache", row.cache},
          {"disk_read_bytes", row.disk_read_bytes},
          {"page_cache_before", row.page_cache_before},
          {"detail", row.detail},
          {"via", row.via},
          {"finished_at", row.finished_at}};
}

Result<BenchRow> BenchRowFromJson(const nlohmann::json& json) {
  try {
    BenchRow row;
    row.model = json.at("model").get<std::string>();
    row.mode = json.value("mode", "solo");
    row.partner = json.value("partner", "");
    row.config_hash = json.value("config_hash", "");
    row.runs = json.value("runs", 0);
    row.load_seconds = json.value("load_seconds", -1.0);
    row.ttft_ms = json.value("ttft_ms", -1.0);
    row.prefill_tps = json.value("prefill_tps", -1.0);
    row.decode_tps = json.value("decode_tps", -1.0);
    row.tps_source = json.value("tps_source", "");
    for (const nlohmann::json& g : json.value("gates", nlohmann::json::array())) {
      row.gates.push_back({g.at("gate").get<std::string>(), g.value("passed", false),
                           g.value("reason", ""), g.value("output_path", "")});
    }
    row.noisy = json.value("noisy", false);
    row.noise = json.value("noise", "");
    row.error = json.value("error", "");
    row.cache = json.value("cache", "");
    row.disk_read_bytes = json.value("disk_read_bytes", int64_t{-1});
    row.page_cache_before = json.value("page_cache_before", -1.0);
    row.detail = json.value("detail", "");
    row.via = json.value("via", "");
    row.finished_at = json.value("finished_at", int64_t{0});
    return row;
  } catch (const nlohmann::json::exception& e) {
    return Status::Error(ErrorCode::kInvalidArgument, std::string("bench row: ") + e.what());
  }
}

}  // namespace swapd
