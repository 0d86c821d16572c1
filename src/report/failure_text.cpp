#include "report/failure_text.hpp"

namespace kvbench {

std::vector<std::string> failure_lines(const CaseResult& r) {
  std::vector<std::string> lines;
  for (const auto& o : r.outputs) {
    if (o.metrics.violations == 0) continue;
    lines.push_back(violations_line(o));
    lines.push_back(worst_line(o));
  }
  if (!r.reason.empty()) lines.push_back("reason: " + r.reason);
  return lines;
}

}  // namespace kvbench
