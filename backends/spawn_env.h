// Pure helpers that prepare a child's start: its environment (swapd's own plus the model's `env`
// entries) and where its program is (execvp-style PATH lookup, done with the CHILD's PATH).
// Stateless functions; safe to call from any thread (they only read the arguments and the file
// system).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace swapd {

using EnvPairs = std::vector<std::pair<std::string, std::string>>;

// `base` (a NULL-terminated "K=V" array such as environ; may be null) followed by `extra` in order;
// a later entry replaces an earlier one with the same name in place. {"K", ""} keeps K present and
// empty. Entries of `base` without '=' are kept as they are.
std::vector<std::string> MergeEnvironment(const char* const* base, const EnvPairs& extra);

// The value of `name` in a "K=V" list (the last entry wins), or nullopt when absent.
std::optional<std::string> FindEnvValue(const std::vector<std::string>& env,
                                        const std::string& name);

// execvp semantics: a name with a '/' is used as it is (it must exist and be executable); a bare
// name is searched in `path_value` (colon-separated; an empty entry means the current directory;
// nullptr means the system default "/bin:/usr/bin"). Returns the path to execute.
Result<std::string> FindExecutable(const std::string& name, const std::string* path_value);

}  // namespace swapd
