#include "backends/spawn_env.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <unordered_map>

namespace swapd {
namespace {

std::string NameOf(const std::string& entry) { return entry.substr(0, entry.find('=')); }

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::vector<std::string> MergeEnvironment(const char* const* base, const EnvPairs& extra) {
  std::vector<std::string> env;
  std::unordered_map<std::string, size_t> index;  // name -> position in env
  for (const char* const* e = base; e != nullptr && *e != nullptr; ++e) {
    env.emplace_back(*e);
    index.emplace(NameOf(env.back()), env.size() - 1);
  }
  for (const auto& [name, value] : extra) {
    std::string entry = name + "=" + value;
    auto it = index.find(name);
    if (it != index.end()) {
      env[it->second] = std::move(entry);
    } else {
      env.push_back(std::move(entry));
      index.emplace(name, env.size() - 1);
    }
  }
  return env;
}

std::optional<std::string> FindEnvValue(const std::vector<std::string>& env,
                                        const std::string& name) {
  for (auto it = env.rbegin(); it != env.rend(); ++it) {
    if (it->size() > name.size() && (*it)[name.size()] == '=' &&
        it->compare(0, name.size(), name) == 0) {
      return it->substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

Result<std::string> FindExecutable(const std::string& name, const std::string* path_value) {
  if (name.empty()) return Status::Error(ErrorCode::kInvalidArgument, "empty command");
  if (name.find('/') != std::string::npos) {
    if (IsExecutableFile(name)) return name;
    int err = errno;
    return Status::Error(ErrorCode::kBackendFailed,
                         "cannot execute \"" + name + "\": " + std::strerror(err ? err : EACCES));
  }
  const std::string path = path_value != nullptr ? *path_value : "/bin:/usr/bin";
  size_t begin = 0;
  while (begin <= path.size()) {
    size_t end = path.find(':', begin);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(begin, end - begin);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (IsExecutableFile(candidate)) return candidate;
    begin = end + 1;
  }
  return Status::Error(ErrorCode::kBackendFailed,
                       "command \"" + name + "\" not found in PATH (" + path + ")");
}

}  // namespace swapd
