#pragma once
// Loads case paths, keeps the cases whose names match a filter, and instantiates each
// through the operator registry. Invalid files and cases become errors; the rest run.
#include <memory>
#include <string>
#include <vector>

#include "cases/case_loader.hpp"
#include "ops/operator.hpp"

namespace kvbench {

struct SelectedCase {
  CaseDef def;
  std::unique_ptr<OpCase> op;
};

struct Selection {
  std::vector<SelectedCase> cases;
  std::vector<CaseFileError> errors;
};

// `filter` is an ECMAScript regex searched in each expanded case name ("" keeps all).
// Throws std::regex_error for a malformed filter.
Selection select_cases(const std::vector<std::string>& paths, const std::string& filter);

}  // namespace kvbench
