// GET /api/bench on the real swapd: the rows a bench run wrote into the store file (before swapd
// started, and while it runs: no cache), the limit and its 400, an empty list without a store or
// with one that cannot be opened, and the API key the other /api routes want.
#include <httplib.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "scoreboard/bench_store.h"
#include "tests/support/http_wait.h"
#include "tests/support/swapd_process.h"
#include "tests/support/temp_dir.h"

namespace swapd::testing {
namespace {

using nlohmann::json;

BenchRow Row(const std::string& model, double decode_tps, int64_t finished_at) {
  BenchRow row;
  row.model = model;
  row.config_hash = "cafe";
  row.runs = 3;
  row.load_seconds = 1.5;
  row.ttft_ms = 120;
  row.prefill_tps = 800;
  row.decode_tps = decode_tps;
  row.tps_source = "timings";
  row.gates.push_back({"json-object", true, "", ""});
  row.gates.push_back({"json-array", false, "not valid JSON at byte 0: x", "/tmp/a.txt"});
  row.finished_at = finished_at;
  return row;
}

void Record(const std::string& path, const BenchRow& row) {
  auto store = BenchStore::Open(path);
  INFO(store.status().message());
  REQUIRE(store.ok());
  REQUIRE(store.value()->Record(row, "host: test (fake CPU, 2 cores)").ok());
}

json Rows(const std::string& url, const std::string& query = "") {
  HttpReply reply = HttpGet(url, "/api/bench" + query);
  INFO(reply.Describe());
  REQUIRE(reply.status == 200);
  return json::parse(reply.body);
}

TEST_CASE("GET /api/bench shows the bench store's newest rows, read afresh",
          "[integration][scoreboard]") {
  TempDir tmp("swapd-bench");
  const std::string db = tmp.Path("state/swapd.db");
  Record(db, Row("coder", 20, 1765000000));
  Record(db, Row("coder", 25, 1765000100));  // the newer run of the same model
  Record(db, Row("helper", 40, 1765000200));
  auto swapd = StartSwapd("store: {path: " + db + "}\nmodels:\n" +
                          FakeModelYaml("coder", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  json body = Rows(url);
  REQUIRE(body["rows"].size() == 2);
  const json& newest = body["rows"][0];
  CHECK(newest["model"] == "helper");
  CHECK(newest["id"].is_number_integer());
  CHECK(newest["machine"] == "host: test (fake CPU, 2 cores)");
  const json& coder = body["rows"][1];
  CHECK(coder["decode_tps"] == 25);
  CHECK(coder["prefill_tps"] == 800);
  CHECK(coder["mode"] == "solo");
  CHECK(coder["gates_passed"] == false);
  CHECK(coder["gates"][1]["reason"] == "not valid JSON at byte 0: x");
  CHECK(coder["finished_at"] == 1765000100);
  CHECK_FALSE(body.contains("error"));

  CHECK(Rows(url, "?limit=1")["rows"].size() == 1);

  // `swapd bench` writes from its own process while swapd runs: the next request shows it.
  Record(db, Row("writer", 30, 1765000300));
  body = Rows(url);
  REQUIRE(body["rows"].size() == 3);
  CHECK(body["rows"][0]["model"] == "writer");

  for (const std::string bad : {"abc", "0", "-1", "1001", "99999"}) {
    HttpReply reply = HttpGet(url, "/api/bench?limit=" + bad);
    INFO(bad << ": " << reply.Describe());
    CHECK(reply.status == 400);
    const json error = json::parse(reply.body, nullptr, false);
    CHECK(error["error"]["message"] == "limit must be a whole number from 1 to 1000");
    CHECK(error["error"]["type"].is_string());
  }
}

TEST_CASE("GET /api/bench without a store, or with a broken one, is an empty scoreboard",
          "[integration][scoreboard]") {
  {
    auto swapd =
        StartSwapd("store: {path: none}\nmodels:\n" + FakeModelYaml("coder", FreeLoopbackPort()));
    REQUIRE(swapd.ok());
    CHECK(Rows(swapd.value().base_url) == json{{"rows", json::array()}});
  }
  TempDir tmp("swapd-bench");
  const std::string db = tmp.Write("swapd.db", std::string(8192, 'x'));
  auto swapd = StartSwapd("store: {path: " + db + "}\nmodels:\n" +
                          FakeModelYaml("coder", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  INFO(swapd.value().process->Output());
  CHECK(Rows(swapd.value().base_url)["rows"] == json::array());
  CHECK(HttpGet(swapd.value().base_url, "/health").status == 200);
}

TEST_CASE("GET /api/bench wants the API key like the other /api routes",
          "[integration][scoreboard]") {
  auto swapd =
      StartSwapd("apiKeys: [sk-bench-key]\nmodels:\n" + FakeModelYaml("coder", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  CHECK(HttpGet(url, "/api/bench").status == 401);
  httplib::Client client(url);
  client.set_bearer_token_auth("sk-bench-key");
  auto reply = client.Get("/api/bench");
  REQUIRE(reply);
  CHECK(reply->status == 200);
  CHECK(json::parse(reply->body)["rows"].is_array());
}

}  // namespace
}  // namespace swapd::testing
