// bench-seed: writes one `swapd bench` row into a bench store, as a bench run would, so that the
// dashboard's browser test (dashboard.test.mjs) has a scoreboard to show. Tests only.
//
//   bench-seed STORE_PATH MACHINE ROW_JSON
#include <cstdio>
#include <nlohmann/json.hpp>

#include "scoreboard/bench_store.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: bench-seed STORE_PATH MACHINE ROW_JSON\n");
    return 2;
  }
  const nlohmann::json json = nlohmann::json::parse(argv[3], nullptr, false);
  auto row = swapd::BenchRowFromJson(json);
  if (json.is_discarded() || !row.ok()) {
    std::fprintf(stderr, "bench-seed: not a bench row: %s\n", argv[3]);
    return 2;
  }
  auto store = swapd::BenchStore::Open(argv[1]);
  if (!store.ok()) {
    std::fprintf(stderr, "bench-seed: %s\n", store.status().message().c_str());
    return 1;
  }
  auto id = store.value()->Record(row.value(), argv[2]);
  if (!id.ok()) {
    std::fprintf(stderr, "bench-seed: %s\n", id.status().message().c_str());
    return 1;
  }
  std::printf("%lld\n", static_cast<long long>(id.value()));
  return 0;
}
