#pragma once
// An implementation's outputs against a golden case, judged exactly as `kvbench check`
// judges them: tolerances or the per-element bounds, boundary alternates, NaN and infinity
// rules, in-place elements that must keep their bits, no element left unwritten
// (specs/comparison.md, specs/cpp-library.md).
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "kvbench/golden.hpp"

namespace kvbench {

// One output's metrics, as `kvbench check --json` reports them.
struct OutputCheck {
  std::string name;
  size_t elements = 0;
  size_t violations = 0;  // elements outside their allowance, mismatches and changes included
  size_t nonfinite_mismatches = 0;
  size_t untouched_changed = 0;  // in-place elements the operator must not touch whose bits changed
  size_t boundary = 0;           // accepted only through an alternate or a permitted NaN
  double max_abs = 0, max_rel = 0, rel_l2 = 0;
  double scale = 0;               // max |golden| over the written elements
  double max_over_tolerance = 0;  // the largest |a - g| / allowance: a violation is above 1
  std::vector<int64_t> worst;     // multi-index of the worst element
  double worst_actual = 0, worst_golden = 0, worst_allowed = 0;
  bool per_element_bound = false;  // the golden's bound decided, not atol + rtol
  bool passed() const { return violations == 0; }
};

struct CheckResult {
  std::string name;  // the case
  std::vector<OutputCheck> outputs;
  std::string error;  // what made the check impossible (a missing output, a wrong shape), or ""
  // What `kvbench check` prints for a failing case: each failing output's violations and
  // worst element, the error, and the repro line; "" when the case passed.
  std::string report;
  bool passed() const;
};

// The outputs by name, each in its output's dtype and shape (Golden::output gives such a
// buffer). A missing, extra, or misshapen output is an error, never a pass.
CheckResult check(const Golden& golden, const std::map<std::string, Array>& actual);
// The outputs from a safetensors file holding each under its own name.
CheckResult check_file(const Golden& golden, const std::string& safetensors_path);

std::ostream& operator<<(std::ostream& os, const CheckResult& r);

}  // namespace kvbench
