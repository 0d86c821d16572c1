#pragma once
// What a failing case's report says beyond its row, shared by the terminal table, bench
// and JUnit: each failing output's lines (check/output_text.hpp), then the case's reason.
#include <string>
#include <vector>

#include "check/output_text.hpp"
#include "runner/case_result.hpp"

namespace kvbench {

// violations_line and worst_line of every output with a violation, then "reason: ..." when
// there is one.
std::vector<std::string> failure_lines(const CaseResult& r);

}  // namespace kvbench
