// UpstreamClientPool: keep-alive HTTP clients to backends, reused across requests. A client is
// taken for one request and given back when that request ended cleanly (its connection may then
// be reused); a client whose request failed or was cancelled is dropped. Thread safe.
#pragma once

#include <httplib.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace swapd {

// A backend's proxy URL split into what httplib::Client takes and a path prefix.
struct UpstreamUrl {
  std::string origin;       // "http://localhost:5800"
  std::string path_prefix;  // "" or "/something" (no trailing '/')
};
UpstreamUrl ParseUpstreamUrl(const std::string& proxy_url);

class UpstreamClientPool {
 public:
  std::unique_ptr<httplib::Client> Take(const std::string& origin);
  void GiveBack(const std::string& origin, std::unique_ptr<httplib::Client> client);
  // Drops idle clients of `origin` (e.g. after its backend stopped).
  void Forget(const std::string& origin);

 private:
  // Each idle keep-alive connection holds one of the backend's HTTP threads (llama-server has few).
  static constexpr size_t kMaxIdlePerOrigin = 8;
  std::mutex mu_;
  std::map<std::string, std::vector<std::unique_ptr<httplib::Client>>> idle_;  // Guarded by mu_
};

}  // namespace swapd
