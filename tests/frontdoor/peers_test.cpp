// Integration test of peers with the real swapd and fake backends standing in for other servers:
// a peer's models are listed and forwarded (its key, its filters, streamed), nothing local starts
// for them, and a peer that is down, slow, failing or not speaking HTTP gets the client a clear
// JSON error within its timeout; GET /api/peers shows what swapd knows of each.
#include <httplib.h>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/child_process.h"
#include "tests/support/fake_backend_process.h"
#include "tests/support/http_wait.h"
#include "tests/support/swapd_process.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

// The state GET /api/peers gives `peer` ("" when it is not listed).
std::string PeerState(const std::string& url, const std::string& peer) {
  json peers = json::parse(HttpGet(url, "/api/peers").body, nullptr, false);
  if (!peers.is_object()) return "";
  for (const json& p : peers["peers"]) {
    if (p["id"] == peer) return p["state"].get<std::string>();
  }
  return "";
}

bool PeerBecomes(const std::string& url, const std::string& peer, const std::string& state) {
  return WaitFor([&] { return PeerState(url, peer) == state; }, 30s);
}

// The error message of an OpenAI-shaped error body ("" when it is not one).
std::string ErrorMessage(const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("error")) return "";
  return j["error"].value("message", "");
}

TEST_CASE("a peer's models are listed and forwarded with its key and filters",
          "[integration][front][peers]") {
  auto peer = StartFakeBackend({"-m", "big"});
  REQUIRE(peer.ok());
  REQUIRE(WaitUntilLoaded(peer.value()));
  const std::string peer_url = peer.value().base_url;
  const int local_port = FreeLoopbackPort();
  const std::string yaml = "models:\n" + FakeModelYaml("pr-local", local_port) +
                           "peers:\n"
                           "  far:\n"
                           "    proxy: " +
                           peer_url +
                           "\n"
                           "    apiKey: sekret\n"
                           "    models: [big, shared]\n"
                           "    filters: {stripParams: top_k, setParams: {temperature: 0.25}}\n"
                           "  near:\n"
                           "    proxy: " +
                           peer_url +
                           "/\n"
                           "    models: [shared]\n"
                           "selectors:\n"
                           "  pr-remote: {strategy: pin, targets: [far/big, pr-local]}\n";
  // Checked once at the start, then not for a long while: the peer's last request is ours.
  auto swapd = StartSwapd(yaml, {"--peer-check-interval", "600"});
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  REQUIRE(PeerBecomes(url, "far", "up"));
  REQUIRE(PeerBecomes(url, "near", "up"));

  json data = json::parse(HttpGet(url, "/v1/models").body)["data"];
  REQUIRE(data.size() == 5);
  CHECK(data[0]["id"] == "far/big");
  CHECK(data[0]["name"] == "far: big");
  CHECK(data[0]["owned_by"] == "llama-swap");
  CHECK(data[0]["status"]["value"] == "unloaded");
  CHECK(data[0]["meta"]["llamaswap"] == json{{"type", "peer"}, {"peerID", "far"}});
  CHECK(data[2]["id"] == "near/shared");
  CHECK(data[3]["id"] == "pr-local");

  // A bare name one peer alone lists; the peer sees its own name, swapd's key and the filters.
  HttpReply reply =
      HttpPost(url, "/v1/chat/completions",
               R"({"model":"big","top_k":5,"messages":[{"role":"user","content":"hi"}]})");
  REQUIRE(reply.status == 200);
  json seen = json::parse(HttpGet(peer_url, "/last-request").body);
  json body = json::parse(seen["body"].get<std::string>());
  CHECK(body["model"] == "big");
  CHECK(body["temperature"] == 0.25);
  CHECK_FALSE(body.contains("top_k"));
  CHECK(seen["headers"]["authorization"] == "Bearer sekret");
  CHECK(seen["headers"]["x-api-key"] == "sekret");

  // Without an apiKey the client's own key goes on; the full name reaches the same peer.
  httplib::Client client(url);
  auto res = client.Post("/v1/chat/completions", {{"Authorization", "Bearer client-key"}},
                         ChatBody("near/shared", false), "application/json");
  REQUIRE(res);
  CHECK(res->status == 200);
  seen = json::parse(HttpGet(peer_url, "/last-request").body);
  CHECK(seen["headers"]["authorization"] == "Bearer client-key");
  CHECK(json::parse(seen["body"].get<std::string>())["model"] == "shared");

  // Two peers list "shared": only the full names address it.
  reply = HttpPost(url, "/v1/chat/completions", ChatBody("shared", false));
  CHECK(reply.status == 404);

  // A selector pinned to a peer's model.
  REQUIRE(HttpPost(url, "/v1/chat/completions", ChatBody("pr-remote", false)).status == 200);
  seen = json::parse(HttpGet(peer_url, "/last-request").body);
  CHECK(json::parse(seen["body"].get<std::string>())["model"] == "big");

  // Streamed as it comes.
  StreamedReply streamed = StreamPost(url, "/v1/chat/completions", ChatBody("far/big", true, 5));
  CHECK(streamed.status == 200);
  CHECK(streamed.content_type.find("text/event-stream") != std::string::npos);
  CHECK(streamed.body.find("[DONE]") != std::string::npos);

  // /upstream/<peer>/<model>/... reaches the peer's own routes.
  CHECK(HttpGet(url, "/upstream/far/big/props").status == 200);

  // Nothing local ran for any of it.
  CHECK(PidsWithArg("--model pr-local ").empty());
  CHECK(json::parse(HttpGet(url, "/running").body)["running"].empty());

  json peers = json::parse(HttpGet(url, "/api/peers").body)["peers"];
  REQUIRE(peers.size() == 2);
  CHECK(peers[0]["id"] == "far");
  CHECK(peers[0]["proxy"] == peer_url);
  CHECK(peers[0]["latency_ms"].is_number());
  CHECK(peers[0]["models_listed"] == 1);
  CHECK(peers[1]["proxy"] == peer_url);  // the trailing '/' dropped
}

TEST_CASE("a peer that is down, slow, failing or not HTTP gets a clear error in time",
          "[integration][front][peers]") {
  auto peer = StartFakeBackend({"-m", "big"});
  REQUIRE(peer.ok());
  REQUIRE(WaitUntilLoaded(peer.value()));
  const int peer_port = peer.value().port;
  auto garbage = StartFakeBackend({"-m", "junk", "--garbage-response"});
  REQUIRE(garbage.ok());
  const int nowhere = FreeLoopbackPort();
  const std::string yaml =
      "models: {}\n"
      "peers:\n"
      "  far:\n"
      "    proxy: " +
      peer.value().base_url +
      "\n"
      "    models: [big]\n"
      "    timeouts: {responseHeader: 3}\n"
      "  junk:\n"
      "    proxy: " +
      garbage.value().base_url +
      "\n"
      "    models: [junk]\n"
      "  dead:\n"
      "    proxy: http://127.0.0.1:" +
      std::to_string(nowhere) +
      "\n"
      "    models: [ghost]\n";
  auto swapd = StartSwapd(yaml, {"--peer-check-interval", "1"});
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  // Down: a fast 503 naming the peer and a Retry-After.
  REQUIRE(PeerBecomes(url, "dead", "down"));
  httplib::Client client(url);
  auto start = Clock::now();
  auto res = client.Post("/v1/chat/completions", ChatBody("ghost", false), "application/json");
  REQUIRE(res);
  CHECK(res->status == 503);
  CHECK(res->has_header("Retry-After"));
  CHECK_THAT(ErrorMessage(res->body), Catch::Contains("peer \"dead\"") &&
                                          Catch::Contains("is down") &&
                                          Catch::Contains("dead/ghost"));
  CHECK(Clock::now() - start < 5s);

  // Slow: nothing within timeouts.responseHeader (3 s: an answer that is due comes well within it
  // on a loaded machine too) of a request that takes 20 s.
  start = Clock::now();
  HttpReply reply = HttpGet(url, "/upstream/far/big/slow?ms=20000", 30s);
  CHECK(reply.status == 504);
  CHECK_THAT(ErrorMessage(reply.body),
             Catch::Contains("peer \"far\"") && Catch::Contains("timeouts.responseHeader"));
  CHECK(Clock::now() - start < 15s);

  // A 500 that is not JSON: a JSON error with the peer's status and the start of its text.
  reply = HttpGet(url, "/upstream/far/big/fail?status=500");
  CHECK(reply.status == 500);
  CHECK_THAT(ErrorMessage(reply.body),
             Catch::Contains("peer \"far\" answered HTTP 500: fake: failing on purpose"));

  // Not HTTP at all.
  reply = HttpPost(url, "/v1/chat/completions", ChatBody("junk", false));
  CHECK(reply.status == 502);
  CHECK_THAT(ErrorMessage(reply.body),
             Catch::Contains("peer \"junk\"") && Catch::Contains("did not answer in HTTP"));

  // A peer that goes away: the first request finds out (502), the next gets the fast 503; once it
  // is back, the checks notice and requests go through again.
  peer.value().process->Kill();
  reply = HttpPost(url, "/v1/chat/completions", ChatBody("big", false));
  CHECK((reply.status == 502 || reply.status == 503));
  CHECK_THAT(ErrorMessage(reply.body), Catch::Contains("peer \"far\""));
  REQUIRE(PeerBecomes(url, "far", "down"));
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("big", false)).status == 503);
  auto back = StartFakeBackend({"-m", "big", "--port", std::to_string(peer_port)});
  REQUIRE(back.ok());
  REQUIRE(PeerBecomes(url, "far", "up"));
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("big", false)).status == 200);
}

// `openssl s_server -WWW` serving `dir` (a model list at v1/models) over TLS on `port` with a new
// self-signed certificate for localhost, written to dir/cert.pem.
std::unique_ptr<Subprocess> TlsPeer(const std::filesystem::path& dir, int port) {
  std::filesystem::create_directories(dir / "v1");
  const std::string make_cert =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost"
      " -addext subjectAltName=DNS:localhost -keyout " +
      (dir / "key.pem").string() + " -out " + (dir / "cert.pem").string() + " >/dev/null 2>&1";
  if (std::system(make_cert.c_str()) != 0) return nullptr;
  std::ofstream(dir / "v1" / "models") << R"({"object":"list","data":[{"id":"tls-m"}]})";
  std::ofstream(dir / "hello.txt") << "hello over TLS\n";
  SubprocessSpec spec;
  spec.argv = {
      "openssl", "s_server", "-quiet", "-WWW",   "-accept", "127.0.0.1:" + std::to_string(port),
      "-cert",   "cert.pem", "-key",   "key.pem"};
  spec.working_dir = dir.string();
  auto started = Subprocess::Start(std::move(spec));
  return started.ok() ? std::move(started).value() : nullptr;
}

TEST_CASE("an https peer is reached with its certificate verified", "[integration][front][peers]") {
  char dir_template[] = "/tmp/swapd-tls-peer-XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  const std::filesystem::path dir = dir_template;
  const int trusted_port = FreeLoopbackPort(), untrusted_port = FreeLoopbackPort();
  auto trusted = TlsPeer(dir / "trusted", trusted_port);
  auto untrusted = TlsPeer(dir / "untrusted", untrusted_port);
  REQUIRE(trusted);
  REQUIRE(untrusted);
  const std::string yaml =
      "models: {}\n"
      "peers:\n"
      "  safe:\n"
      "    proxy: https://localhost:" +
      std::to_string(trusted_port) +
      "\n"
      "    models: [tls-m]\n"
      "  forged:\n"
      "    proxy: https://localhost:" +
      std::to_string(untrusted_port) +
      "\n"
      "    models: [other-m]\n";
  // Only the first peer's certificate is trusted.
  auto swapd = StartSwapd(yaml, {"--peer-check-interval", "1"},
                          {"SSL_CERT_FILE=" + (dir / "trusted" / "cert.pem").string()});
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  REQUIRE(PeerBecomes(url, "safe", "up"));
  HttpReply r = HttpGet(url, "/upstream/safe/tls-m/hello.txt", 30s);
  CHECK(r.status == 200);
  CHECK(r.body == "hello over TLS\n");

  // Down (refused) until s_server listens, then down because its certificate is not trusted.
  auto detail = [&] {
    json peers = json::parse(HttpGet(url, "/api/peers").body, nullptr, false);
    return peers.is_object() ? peers["peers"][0].value("detail", "") : "";
  };
  REQUIRE(WaitFor([&] { return detail().find("certificate verify failed") != std::string::npos; },
                  30s));
  CHECK(PeerState(url, "forged") == "down");
  r = HttpPost(url, "/v1/chat/completions", ChatBody("other-m", false));
  CHECK(r.status == 503);
  CHECK_THAT(ErrorMessage(r.body),
             Catch::Contains("peer \"forged\"") && Catch::Contains("certificate verify failed"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace swapd::testing
