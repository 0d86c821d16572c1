#pragma once
// JUnit XML for CI systems: one <testcase> per case (classname = operator id), failures
// with their figures and worst element, skips with their reason, invalid case files as
// <error> test cases.
#include <string>
#include <vector>

#include "cases/case_loader.hpp"
#include "runner/case_result.hpp"

namespace kvbench {

std::string junit_xml(const std::vector<CaseResult>& results, const std::vector<CaseFileError>& invalid,
                      const std::vector<std::string>& repro);

}  // namespace kvbench
