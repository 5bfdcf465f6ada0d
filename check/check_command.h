// `swapd check`: loads the configuration, prints every diagnostic and the effective configuration
// (globals; per group its flags and members; per model its group, aliases, argv, cmdStop,
// environment overrides, proxy, port, check endpoint, timeouts, limits and filters) as text or
// JSON. Pure functions of their arguments apart from reading the config files. Thread compatible.
//
// The JSON document of `swapd check --json` (keys are stable; new keys may be added, none renamed):
// {
//   "valid": bool,                       // true iff the configuration loaded without error
//   "diagnostics": [{"file": str, "line": int, "column": int,   // line/column 0 = unknown
//                    "severity": "error"|"warning"|"hint", "message": str}, ...],
//   "summary": {"models": int, "groups": int, "errors": int, "warnings": int, "hints": int},
//   "config": null when invalid, else DescribeConfigJson():
//   {
//     "healthCheckTimeout": seconds, "logLevel": str, "logToStdout": str, "startPort": int,
//     "globalTTL": seconds (0 = never), "unloadTimeout": seconds,
//     "apiKeyCount": int (the keys themselves are never printed), "preload": [model ids],
//     "sendLoadingState": bool, "includeAliasesInList": bool,
//     "groups": {name: {"swap": bool, "exclusive": bool, "persistent": bool,
//                       "members": [model ids], "definedAt": "file:line:col" | ""}},
//     "models": {id: {"name": str, "description": str, "group": str, "aliases": [str],
//                     "argv": [str], "cmdStop": [str] ([] = SIGTERM to the process group),
//                     "env": [{"name": str, "value": str}] (in order; "" = set to empty),
//                     "proxy": str, "port": int (0 = no ${PORT}),
//                     "checkEndpoint": str ("none" = ready once spawned),
//                     "ttl": seconds (0 = never unloaded), "unloadTimeout": seconds,
//                     "concurrencyLimit": int, "unlisted": bool,
//                     "useModelName": str ("" = model field forwarded unchanged),
//                     "filters": {"stripParams": [str], "setParams": object},
//                     "metadata": object, "definedAt": "file:line:col" | ""}}
//   }
// }
// Groups include "(default)", the implicit group of ungrouped models, when there are any.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>

#include "check/shell_quote.h"
#include "config/config.h"
#include "config/loader.h"

namespace swapd {

// Returns the process exit code: 0 when the configuration is valid, 1 otherwise.
// Text mode: diagnostics go to `err`, the effective configuration and a summary line to `out`.
// JSON mode (`json`): one document on `out`, nothing on `err`. `load` names the files; its
// `machine` (what this machine has) resolves `auto` budgets and sizes the page-cache warnings.
int RunCheck(const LoadOptions& load, bool json, std::ostream& out, std::ostream& err);

// The effective configuration, human-readable or as JSON (also used by tests).
std::string DescribeConfig(const Config& config);
std::string DescribeConfigJson(const Config& config);

}  // namespace swapd
