#pragma once
// Builds an operator's case from a JSON document written in a test.
#include <doctest/doctest.h>

#include <memory>

#include "cases/case_loader.hpp"
#include "ops/operator.hpp"

// The single expanded case of `doc`, instantiated by its operator (validation included).
inline std::unique_ptr<kvbench::OpCase> instantiate(const nlohmann::json& doc) {
  auto loaded = kvbench::expand_case_document(doc, "test.json", {});
  REQUIRE(loaded.errors.empty());
  REQUIRE(loaded.cases.size() == 1);
  return kvbench::instantiate_case(*kvbench::find_operator(doc["op"]), loaded.cases[0], {});
}
