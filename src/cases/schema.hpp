#pragma once
// A small JSON Schema validator: the subset specs/case.schema.json uses (type, enum,
// properties, required, additionalProperties, items, minItems, maxItems, minimum,
// maximum, minLength, pattern) and "$ref": "#/$defs/NAME", which the report schemas use.
// Each violation names the JSON pointer at fault.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvbench {

struct SchemaViolation {
  std::string pointer;
  std::string message;
};

std::vector<SchemaViolation> validate_schema(const nlohmann::json& doc, const nlohmann::json& schema);

// The case-file schema compiled into the binary (specs/case.schema.json).
const nlohmann::json& case_schema();

// RFC 6901 escaping of one reference token.
std::string pointer_token(const std::string& key);

}  // namespace kvbench
