#include "report/text_report.hpp"

#include <cstdio>

namespace kvbench {
namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

std::string fit(const std::string& s, size_t width) {
  if (s.size() <= width) return s + std::string(width - s.size(), ' ');
  return s.substr(0, width - 3) + "...";
}

std::string report_header(size_t w) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-4s  %s  %10s %10s %10s %8s %8s %10s", "", fit("case", w).c_str(), "max_abs",
                "max_rel", "rel_l2", "viol", "bound", "time");
  return buf;
}

std::string report_row(const CaseResult& r, size_t w) {
  char buf[512];
  if (r.status == Status::skip) {
    std::snprintf(buf, sizeof buf, "%-4s  %s  %s", status_name(r.status), fit(r.name, w).c_str(), r.reason.c_str());
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%-4s  %s  %10s %10s %10s %8zu %8zu %8.1fms", status_name(r.status),
                fit(r.name, w).c_str(), number(r.max_abs()).c_str(), number(r.max_rel()).c_str(),
                number(r.rel_l2()).c_str(), r.violations(), r.boundary(), r.time_ms);
  std::string row = buf;
  for (const auto& [label, value] : r.figures) row += "  " + label + " " + value;
  if (r.status == Status::fail) row += "\n      worst: " + r.worst();
  return row;
}

std::string report_summary(size_t passed, size_t failed, size_t skipped) {
  return std::to_string(passed) + " passed, " + std::to_string(failed) + " failed, " + std::to_string(skipped) +
         " skipped";
}

}  // namespace kvbench
