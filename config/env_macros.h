// `${env.NAME}` substitution, the first expansion step: every scalar of the tree (keys too) gets
// the variable's value. It works on parsed scalars, not on the raw text, so YAML comments are
// never expanded and a value can never change the YAML structure. An unset variable is an error
// at the position where it is written.
// Not synchronized: works on one load's tree.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "config/diagnostics.h"
#include "config/yaml_document.h"

namespace swapd {

using GetEnvFunction = std::function<std::optional<std::string>(const std::string&)>;

// Expands in place. `getenv` returns nullopt for an unset variable.
void SubstituteEnvMacros(YamlNode& root, const GetEnvFunction& getenv, DiagnosticSink& sink);

// getenv(3) as a GetEnvFunction.
std::optional<std::string> ProcessEnv(const std::string& name);

}  // namespace swapd
