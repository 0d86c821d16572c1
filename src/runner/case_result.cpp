#include "runner/case_result.hpp"

#include <algorithm>
#include <sstream>

namespace kvbench {

const char* status_name(Status s) {
  switch (s) {
    case Status::pass: return "PASS";
    case Status::fail: return "FAIL";
    case Status::skip: return "SKIP";
  }
  return "?";
}

double CaseResult::max_abs() const {
  double v = 0;
  for (const auto& o : outputs) v = std::max(v, o.metrics.max_abs);
  return v;
}
double CaseResult::max_rel() const {
  double v = 0;
  for (const auto& o : outputs) v = std::max(v, o.metrics.max_rel);
  return v;
}
double CaseResult::rel_l2() const {
  double v = 0;
  for (const auto& o : outputs) v = std::max(v, o.metrics.rel_l2);
  return v;
}
size_t CaseResult::violations() const {
  size_t n = 0;
  for (const auto& o : outputs) n += o.metrics.violations;
  return n;
}
size_t CaseResult::boundary() const {
  size_t n = 0;
  for (const auto& o : outputs) n += o.metrics.boundary;
  return n;
}

std::string CaseResult::worst() const {
  for (const auto& o : outputs) {
    const Metrics& m = o.metrics;
    if (m.violations == 0) continue;
    std::ostringstream s;
    s.precision(9);
    s << m.tensor << index_string(o.shape, m.worst_index) << " = " << m.worst_actual << ", golden " << m.worst_golden;
    if (m.untouched_changed) s << " (" << m.untouched_changed << " elements outside the written region changed)";
    return s.str();
  }
  return "";
}

}  // namespace kvbench
