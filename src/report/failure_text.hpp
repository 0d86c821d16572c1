#pragma once
// What a failing case's report says beyond its row, shared by the terminal table, bench
// and JUnit: per failing output the tolerance it violated, how many elements (and how many
// NaN/Inf mismatches), and its worst element with actual, golden, abs and rel error.
#include <string>
#include <vector>

#include "runner/case_result.hpp"

namespace kvbench {

// "|a-g| <= atol 0.001 + rtol 0.001 * |golden|", or "exact (atol = rtol = 0)".
std::string tolerance_text(const Tolerance& t);
// A number with three significant digits, as the report's columns show them.
std::string g3(double v);

// "key: 12 of 1536 elements out of tolerance |a-g| <= ...; 2 NaN/Inf mismatches"
std::string violations_line(const OutputResult& o);

// "worst: key[1,2,3] = 0.51171875, golden 0.5: abs err 0.0117, rel err 0.0234 > allowed 0.0015"
std::string worst_line(const OutputResult& o);

// The lines above for every output with a violation, then "reason: ..." when there is one.
std::vector<std::string> failure_lines(const CaseResult& r);

}  // namespace kvbench
