#include "report/text_report.hpp"

#include <cstdio>

#include "report/failure_text.hpp"

namespace kvbench {
namespace {

// The largest error relative to its output's scale, over the case's outputs.
double err_over_scale(const CaseResult& r) {
  double v = 0;
  for (const auto& o : r.outputs) v = std::max(v, o.metrics.err_over_scale());
  return v;
}

}  // namespace

std::string report_header(const NameColumn& c) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-4s  %s  %10s %10s %10s %8s %8s %10s", "", c.pad("case").c_str(),
                "max_abs", "err/scale", "rel_l2", "viol", "bound", "time");
  return buf;
}

std::string report_row(const CaseResult& r, const NameColumn& c) {
  std::string margin(kRowIndent - 5, ' ');  // a new line indented 6: under the status
  margin[0] = '\n';  // (not "\n" + std::string(...): GCC 12 warns -Wrestrict on it falsely)
  std::string row = std::string(status_name(r.status)) + "  " + c.cell(r.name) + "  ";
  // A skip, or a failure before any output was compared (a missing or unreadable file),
  // has no figures: its reason is what there is to say.
  if (r.status == Status::skip || r.outputs.empty())
    return row + (r.reason.empty() ? "no outputs compared" : r.reason);
  char buf[256];
  std::snprintf(buf, sizeof buf, "%10s %10s %10s %8zu %8zu %8.1fms", g3(r.max_abs()).c_str(),
                g3(err_over_scale(r)).c_str(), g3(r.rel_l2()).c_str(), r.violations(), r.boundary(),
                r.time_ms);
  row += buf;
  std::string extra;
  for (const auto& [label, value] : r.figures) extra += "  " + label + " " + value;
  // On a terminal, figures that would run past its edge go on a line of their own.
  const bool own_line = c.wrap && kRowIndent + c.width + kRowFiguresWidth + extra.size() > c.wrap;
  row += own_line && !extra.empty() ? margin + extra.substr(2) : extra;
  if (r.status == Status::fail)
    for (const auto& line : failure_lines(r)) row += margin + line;
  return row;
}

std::string report_summary(size_t passed, size_t failed, size_t skipped) {
  return std::to_string(passed) + " passed, " + std::to_string(failed) + " failed, " +
         std::to_string(skipped) + " skipped";
}

}  // namespace kvbench
