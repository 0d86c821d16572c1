#pragma once
// One output's comparison as the reports say it: the violations line and the worst element,
// shared by kvbench's terminal table, bench, JUnit and the C++ library's report.
#include <string>

#include "check/compare.hpp"
#include "check/tolerance.hpp"
#include "core/tensor.hpp"

namespace kvbench {

// One output's metrics with the tolerance and shape it was compared under.
struct OutputResult {
  Metrics metrics;
  Tolerance tolerance;
  Shape shape;
};

// "|a-g| <= atol 0.001 + rtol 0.001 * |golden|", or "exact (atol = rtol = 0)".
std::string tolerance_text(const Tolerance& t);
// A number with three significant digits, as the report's columns show them.
std::string g3(double v);

// "key: 12 of 1536 elements out of tolerance |a-g| <= ...; 2 NaN/Inf mismatches"
std::string violations_line(const OutputResult& o);

// "worst: key[1,2,3] = 0.51171875, golden 0.5: abs err 0.0117, rel err 0.0234 > allowed 0.0015"
std::string worst_line(const OutputResult& o);

// `PROGRAM run FILE --filter '^NAME$'` with the name regex-escaped and shell-quoted: the
// command that reruns one case.
std::string repro_command(const std::string& program, const std::string& file, const std::string& case_name,
                          const std::string& extra = "");

}  // namespace kvbench
