#include "tests/support/swapd_process.h"

#include <dirent.h>
#include <unistd.h>

#include <httplib.h>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "tests/support/proc_file.h"

namespace swapd::testing {

std::string FakeModelYaml(const std::string& id, int port, const std::string& flags,
                          const std::string& extra_yaml) {
  std::ostringstream out;
  out << "  \"" << id << "\":\n"
      << "    cmd: " << FAKE_BACKEND_BINARY << " --port " << port << " --model ${MODEL_ID} "
      << flags << "\n"
      << "    proxy: http://127.0.0.1:" << port << "\n";
  if (!extra_yaml.empty()) out << extra_yaml;
  return out.str();
}

Result<SwapdInstance> StartSwapd(const std::string& yaml, const std::vector<std::string>& args,
                                 const std::vector<std::string>& env,
                                 std::chrono::milliseconds timeout,
                                 const std::vector<std::string>& wrapper) {
  SwapdInstance instance;
  char tmpl[] = "/tmp/swapd-test-XXXXXX";
  if (!mkdtemp(tmpl)) return Status::Error(ErrorCode::kInternal, "mkdtemp failed");
  instance.dir = tmpl;
  instance.config_path = instance.dir + "/config.yaml";
  std::ofstream(instance.config_path) << yaml;

  SubprocessSpec spec;
  spec.argv = wrapper;
  for (const char* arg :
       {SWAPD_BINARY, "--config", instance.config_path.c_str(), "--listen", "127.0.0.1:0"}) {
    spec.argv.push_back(arg);
  }
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  // Its history store (store.path's default) in its own directory, unless `env` says otherwise.
  spec.env = {"STATE_DIRECTORY=" + instance.dir};
  spec.env.insert(spec.env.end(), env.begin(), env.end());
  auto started = Subprocess::Start(spec);
  if (!started.ok()) return started.status();
  instance.process = std::move(started).value();
  auto line = instance.process->WaitForLineMatching(
      [](std::string_view l) { return l.find("listening on http://") != std::string_view::npos; },
      timeout);
  if (!line) {
    return Status::Error(ErrorCode::kTimeout, "swapd did not start listening; its output:\n" +
                                                  instance.process->Output());
  }
  size_t at = line->find("http://");
  size_t colon = line->find(':', at + 7);
  instance.port = std::atoi(line->c_str() + colon + 1);
  instance.base_url = "http://127.0.0.1:" + std::to_string(instance.port);
  return instance;
}

bool RewriteConfig(const SwapdInstance& swapd, const std::string& yaml) {
  const std::string tmp = swapd.dir + "/.config.yaml.new";
  {
    std::ofstream out(tmp);
    out << yaml;
    if (!out) return false;
  }
  return std::rename(tmp.c_str(), swapd.config_path.c_str()) == 0;
}

std::vector<int> PidsWithArg(const std::string& needle) {
  std::vector<int> pids;
  DIR* dir = opendir("/proc");
  if (!dir) return pids;
  while (dirent* entry = readdir(dir)) {
    int pid = std::atoi(entry->d_name);
    if (pid <= 0) continue;
    std::string text = ReadProcFile("/proc/" + std::string(entry->d_name) + "/cmdline");
    for (char& c : text) {
      if (c == '\0') c = ' ';
    }
    // Zombies have an empty cmdline: they are gone for this purpose.
    if (text.find(needle) != std::string::npos) pids.push_back(pid);
  }
  closedir(dir);
  return pids;
}

bool NoneWithArgWithin(const std::string& needle, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!PidsWithArg(needle).empty()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

bool ProcessGone(int pid) {
  const ProcStat st = ReadProcStat(pid);
  if (st.pid == 0) return true;
  if (st.state != 'Z' && st.state != 'X') return false;
  // A zombie leader may still have threads exiting, and the files stay open until the last
  // one has gone: a finished thread leaves /proc/PID/task after closing them.
  int threads = 0;
  if (DIR* tasks = opendir(("/proc/" + std::to_string(pid) + "/task").c_str())) {
    while (dirent* entry = readdir(tasks)) threads += entry->d_name[0] != '.';
    closedir(tasks);
  }
  return threads <= 1;
}

StreamedReply StreamPost(const std::string& base_url, const std::string& path,
                         const std::string& body, std::function<bool(const std::string&)> on_chunk,
                         const std::vector<std::pair<std::string, std::string>>& headers) {
  StreamedReply reply;
  httplib::Client client(base_url);
  client.set_read_timeout(std::chrono::seconds(60));
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = body;
  req.headers.emplace("Content-Type", "application/json");
  for (const auto& [k, v] : headers) req.headers.emplace(k, v);
  req.response_handler = [&](const httplib::Response& r) {
    reply.status = r.status;
    reply.content_type = r.get_header_value("Content-Type");
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    reply.chunks.emplace_back(data, n);
    reply.body.append(data, n);
    return on_chunk ? on_chunk(reply.chunks.back()) : true;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  if (!client.send(req, res, error)) reply.error = httplib::to_string(error);
  return reply;
}

std::string ChatBody(const std::string& model, bool stream, int max_tokens,
                     const std::string& prompt) {
  nlohmann::json body = {{"model", model},
                         {"stream", stream},
                         {"max_tokens", max_tokens},
                         {"messages", {{{"role", "user"}, {"content", prompt}}}}};
  if (stream) body["stream_options"] = {{"include_usage", true}};
  return body.dump();
}

int ChatStatus(const std::string& url, const std::string& model) {
  return HttpPost(url, "/v1/chat/completions", ChatBody(model, false), "application/json",
                  std::chrono::seconds(60))
      .status;
}

}  // namespace swapd::testing
