#pragma once
// Builds an operator's case from a JSON document written in a test.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "cases/case_loader.hpp"
#include "core/error.hpp"
#include "ops/operator.hpp"

// The single expanded case of `doc`, instantiated by its operator (validation included).
inline std::unique_ptr<kvbench::OpCase> instantiate(const nlohmann::json& doc) {
  auto loaded = kvbench::expand_case_document(doc, "test.json", {});
  REQUIRE(loaded.errors.empty());
  REQUIRE(loaded.cases.size() == 1);
  return kvbench::instantiate_case(*kvbench::find_operator(doc["op"]), loaded.cases[0], {});
}

// The pointer and message of the CaseError a case document (JSON text) raises, from its
// validation or its operator's parse; "" if it is accepted.
inline std::string rejection(const std::string& json) {
  const auto doc = nlohmann::json::parse(json);
  auto loaded = kvbench::expand_case_document(doc, "test.json", {});
  if (!loaded.errors.empty()) return loaded.errors[0].pointer + ": " + loaded.errors[0].message;
  try {
    kvbench::instantiate_case(*kvbench::find_operator(doc["op"]), loaded.cases.at(0), {});
  } catch (const kvbench::CaseError& e) {
    return e.pointer() + ": " + e.what();
  }
  return "";
}
