// The group rules of swapd as a pure function: which models must be stopped before a model may
// run (DESIGN.md "Group semantics"). The Scheduler computes this once per config and consults it
// for every decision. Pure, no state: safe from any thread.
#pragma once

#include <map>
#include <set>
#include <string>

#include "config/config.h"

namespace swapd {

// For every model T of group G: the other members of G if G.swap, plus every model of another
// group that is not persistent if G.exclusive. A model never conflicts with itself. Models whose
// group is missing from `config.groups` get the default group's rules (swap, exclusive).
// Not symmetric: a member of a non-exclusive group may run beside an exclusive one, but asking
// for the exclusive one stops it.
std::map<std::string, std::set<std::string>> ComputeConflicts(const Config& config);

// Why ComputeConflicts stops `other` for `model`, in the config's words (for the dashboard's
// "a request for X would stop Y because ..."); "" when the group rules do not stop it.
std::string ConflictReason(const Config& config, const std::string& model,
                           const std::string& other);

// The matrix router's static part: for every model, the models that share no set with it (a
// model in no set conflicts with every other). Which of the others stop is decided per load.
std::map<std::string, std::set<std::string>> ComputeMatrixConflicts(const Config& config);

}  // namespace swapd
