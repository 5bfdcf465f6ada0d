// The subset of JSON Schema that gate files may use, checked when the file is loaded (so a typo
// in a keyword is an error, not a check silently skipped) and applied to a model's answer.
// Keywords: type (a name or a list of names; "integer" accepts 3 and 3.0), properties, required,
// additionalProperties (true or false only), items (one schema for every element), enum, const,
// minItems, maxItems, minLength, maxLength (in Unicode code points), minimum, maximum, pattern
// (ECMAScript, searched anywhere in the string, as JSON Schema does). The annotations $schema,
// $id, $comment, title, description, default and examples are accepted and ignored; any other
// keyword is an error. Pure functions; thread safe.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace swapd {

struct SchemaProblem {
  std::string pointer;  // JSON pointer of the offending keyword's schema ("/properties/age")
  std::string message;  // "unknown keyword \"minimun\""
};

// What is wrong with `schema` itself; empty when it can be used.
std::vector<SchemaProblem> CheckSchema(const nlohmann::json& schema);

// Why `value` does not match `schema` (checked by CheckSchema), one line naming the place in the
// value: "$.items[2]: expected integer, got string". Empty when it matches.
std::string SchemaMismatch(const nlohmann::json& schema, const nlohmann::json& value);

}  // namespace swapd
