#include "runner/case_result.hpp"

#include <algorithm>
#include <sstream>

namespace kvbench {

CaseResult error_result(const CaseDef& def, const OpCase& op, const std::exception& e) {
  return CaseResult{.name = def.name,
                    .file = def.file,
                    .op = def.op,
                    .status = Status::fail,
                    .reason = std::string("error: ") + e.what(),
                    .resolved = op.resolved()};
}

const char* status_name(Status s) {
  switch (s) {
    case Status::pass: return "PASS";
    case Status::fail: return "FAIL";
    case Status::skip: return "SKIP";
  }
  return "?";
}

namespace {

// The largest (errors) or the total (counts) of one metric over a case's outputs.
template <typename F>
auto max_over(const std::vector<OutputResult>& outputs, F metric) {
  decltype(metric(outputs[0].metrics)) v{};
  for (const auto& o : outputs) v = std::max(v, metric(o.metrics));
  return v;
}
template <typename F>
size_t sum_over(const std::vector<OutputResult>& outputs, F metric) {
  size_t n = 0;
  for (const auto& o : outputs) n += metric(o.metrics);
  return n;
}

}  // namespace

double CaseResult::max_abs() const {
  return max_over(outputs, [](const Metrics& m) { return m.max_abs; });
}
double CaseResult::max_rel() const {
  return max_over(outputs, [](const Metrics& m) { return m.max_rel; });
}
double CaseResult::rel_l2() const {
  return max_over(outputs, [](const Metrics& m) { return m.rel_l2; });
}
size_t CaseResult::violations() const {
  return sum_over(outputs, [](const Metrics& m) { return m.violations; });
}
size_t CaseResult::boundary() const {
  return sum_over(outputs, [](const Metrics& m) { return m.boundary; });
}

std::string CaseResult::worst() const {
  for (const auto& o : outputs) {
    const Metrics& m = o.metrics;
    if (m.violations == 0) continue;
    std::ostringstream s;
    s.precision(9);
    s << m.tensor << index_string(o.shape, m.worst_index) << " = " << m.worst_actual << ", golden "
      << m.worst_golden;
    if (m.untouched_changed)
      s << " (" << m.untouched_changed << " elements outside the written region changed)";
    return s.str();
  }
  return "";
}

}  // namespace kvbench
