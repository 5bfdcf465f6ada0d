#include "frontdoor/peer_monitor.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/proxy_url.h"
#include "http/http_client.h"

namespace swapd {
namespace {

using namespace std::chrono_literals;

// A check gives up on a connect (or TLS handshake) after this long, and on the answer after
// kCheckRead: a peer slower than that to list its models is as good as down.
constexpr std::chrono::seconds kCheckConnect{5};
constexpr std::chrono::seconds kCheckRead{10};
constexpr size_t kMaxModelList = 4u << 20;

std::chrono::seconds Capped(std::chrono::seconds configured, std::chrono::seconds cap) {
  return configured.count() > 0 ? std::min(configured, cap) : cap;
}

}  // namespace

const char* ToString(PeerHealth::State state) {
  switch (state) {
    case PeerHealth::State::kUnknown:
      return "unknown";
    case PeerHealth::State::kUp:
      return "up";
    case PeerHealth::State::kError:
      return "error";
    case PeerHealth::State::kDown:
      return "down";
  }
  return "unknown";
}

PeerMonitor::PeerMonitor(Settings settings) : settings_(settings) {
  thread_ = std::thread([this] { Run(); });
}

PeerMonitor::~PeerMonitor() { Stop(); }

void PeerMonitor::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  stopping_ = true;
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PeerMonitor::SetPeers(const std::map<std::string, PeerConfig>& peers) {
  std::lock_guard lock(mu_);
  std::map<std::string, Watched> next;
  for (const auto& [id, peer] : peers) {
    Watched w{peer, {}};
    auto old = peers_.find(id);
    if (old != peers_.end() && old->second.config.proxy == peer.proxy &&
        old->second.config.api_key == peer.api_key) {
      w.health = old->second.health;
    }
    next.emplace(id, std::move(w));
  }
  peers_ = std::move(next);
  wake_.notify_all();
}

std::optional<PeerHealth> PeerMonitor::Health(const std::string& peer) const {
  std::lock_guard lock(mu_);
  auto it = peers_.find(peer);
  if (it == peers_.end()) return std::nullopt;
  return it->second.health;
}

std::map<std::string, PeerHealth> PeerMonitor::All() const {
  std::lock_guard lock(mu_);
  std::map<std::string, PeerHealth> out;
  for (const auto& [id, w] : peers_) out[id] = w.health;
  return out;
}

void PeerMonitor::Unreachable(const std::string& peer, const std::string& why) {
  std::lock_guard lock(mu_);
  auto it = peers_.find(peer);
  if (it == peers_.end()) return;
  PeerHealth& h = it->second.health;
  if (h.state != PeerHealth::State::kDown) {
    spdlog::warn("peer {} is down: {}", peer, why);
    h.failures = 0;
  }
  h.state = PeerHealth::State::kDown;
  h.detail = why;
  ++h.failures;
  Schedule(h);
}

void PeerMonitor::Reached(const std::string& peer) {
  std::lock_guard lock(mu_);
  auto it = peers_.find(peer);
  if (it == peers_.end()) return;
  PeerHealth& h = it->second.health;
  if (h.state == PeerHealth::State::kDown || h.state == PeerHealth::State::kUnknown) {
    spdlog::info("peer {} answered a request: up", peer);
    h.state = PeerHealth::State::kUp;
    h.detail.clear();
    h.failures = 0;
  }
}

void PeerMonitor::CheckSoon(const std::string& peer) {
  std::lock_guard lock(mu_);
  auto it = peers_.find(peer);
  if (it == peers_.end()) return;
  PeerHealth& h = it->second.health;
  const auto since = std::chrono::system_clock::now() - h.checked;
  if (since < 1s) return;
  h.next_check = Clock::now();
  wake_.notify_all();
}

void PeerMonitor::Schedule(PeerHealth& health) const {
  auto wait = settings_.interval;
  if (health.state == PeerHealth::State::kDown) {
    for (int i = 1; i < health.failures && wait < settings_.max_backoff; ++i) wait *= 2;
    wait = std::min(wait, settings_.max_backoff);
  }
  health.next_check = Clock::now() + wait;
}

void PeerMonitor::Run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    // The peer whose check is due first.
    std::string due;
    Clock::time_point when = Clock::time_point::max();
    for (const auto& [id, w] : peers_) {
      if (w.health.next_check < when) {
        when = w.health.next_check;
        due = id;
      }
    }
    if (due.empty() || when > Clock::now()) {
      if (when == Clock::time_point::max()) {
        wake_.wait(lock);
      } else {
        wake_.wait_until(lock, when);
      }
      continue;
    }
    const PeerConfig config = peers_.at(due).config;
    const PeerHealth before = peers_.at(due).health;
    lock.unlock();
    PeerHealth after = Check(config, before);
    lock.lock();
    auto it = peers_.find(due);
    if (it == peers_.end() || it->second.config.proxy != config.proxy) continue;  // reloaded
    if (after.state != before.state) {
      if (after.state == PeerHealth::State::kUp) {
        spdlog::info("peer {} is up ({} models, {} ms)", due, after.models,
                     after.latency ? after.latency->count() : 0);
      } else {
        spdlog::warn("peer {} is {}: {}", due, ToString(after.state), after.detail);
      }
    }
    Schedule(after);
    it->second.health = std::move(after);
  }
}

PeerHealth PeerMonitor::Check(const PeerConfig& peer, PeerHealth health) const {
  UpstreamConnection::Timeouts timeouts;
  timeouts.connect = Capped(peer.timeouts.connect, kCheckConnect);
  timeouts.tls_handshake = Capped(peer.timeouts.tls_handshake, kCheckConnect);
  timeouts.read = kCheckRead;
  timeouts.write = kCheckRead;
  HttpClient client(ParseProxyUrl(peer.proxy), timeouts);
  client.set_stop(&stopping_);
  ClientRequest request;
  request.target = "/v1/models";
  if (!peer.api_key.empty()) request.headers.Add("Authorization", "Bearer " + peer.api_key);

  int status = 0;
  std::string body;
  bool too_large = false;
  UpstreamFailure failure;
  const auto began = Clock::now();
  health.checked = std::chrono::system_clock::now();
  const bool whole = client.Stream(
      request,
      [&status](const ClientResponse& head) {
        status = head.status;
        return true;
      },
      [&](std::string_view piece) {
        body.append(piece);
        too_large = body.size() > kMaxModelList;
        return !too_large;
      },
      failure);
  if (!whole) {
    health.state = PeerHealth::State::kDown;
    health.detail = too_large ? "its model list is larger than 4 MiB" : failure.text;
    ++health.failures;
    return health;
  }
  health.latency = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - began);
  health.failures = 0;
  const nlohmann::json list = nlohmann::json::parse(body, nullptr, false);
  if (status / 100 != 2) {
    health.state = PeerHealth::State::kError;
    health.detail = "GET /v1/models answered HTTP " + std::to_string(status);
  } else if (!list.is_object() || !list.contains("data") || !list["data"].is_array()) {
    health.state = PeerHealth::State::kError;
    health.detail = "GET /v1/models did not answer with a model list";
  } else {
    health.state = PeerHealth::State::kUp;
    health.detail.clear();
    health.models = static_cast<int64_t>(list["data"].size());
  }
  return health;
}

}  // namespace swapd
