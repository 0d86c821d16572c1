#include "check/output_text.hpp"

#include <cmath>
#include <cstdio>

#include "core/shell_quote.hpp"

namespace kvbench {
namespace {

// Enough digits to tell an f32 value from its neighbour.
std::string g9(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

std::string g3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string tolerance_text(const Tolerance& t) {
  if (t.exact()) return "exact (atol = rtol = 0)";
  return "|a-g| <= atol " + g3(t.atol) + " + rtol " + g3(t.rtol) + " * |golden|";
}

std::string violations_line(const OutputResult& o) {
  const Metrics& m = o.metrics;
  const size_t out_of_tolerance = m.violations - m.untouched_changed;
  std::string line =
      m.tensor + ": " + std::to_string(out_of_tolerance) + " of " + std::to_string(m.elements) +
      " elements out of tolerance " +
      (m.per_element_bound ? "|a-g| <= the golden's per-element bound" : tolerance_text(o.tolerance)) + "; " +
      std::to_string(m.nonfinite_mismatches) + " NaN/Inf mismatches";
  if (m.untouched_changed)
    line += "; " + std::to_string(m.untouched_changed) + " elements outside the written region changed";
  if (m.unwritten)
    line += "; " + std::to_string(m.unwritten) + " never written (still the poison, where NaN is permitted)";
  return line;
}

std::string worst_line(const OutputResult& o) {
  const Metrics& m = o.metrics;
  const double a = m.worst_actual, g = m.worst_golden;
  std::string line = "worst: " + m.tensor + index_string(o.shape, m.worst_index) + " = " + g9(a);
  if (m.worst_untouched)
    return line + ", was " + g9(g) + ": outside the written region, its bits must not change";
  line += ", golden " + g9(g);
  if (!std::isfinite(a) || !std::isfinite(g)) return line + ": NaN/Inf mismatch";
  const double abs_err = std::fabs(a - g);
  const double allowed = m.worst_allowed;
  line +=
      ": abs err " + g3(abs_err) + ", rel err " + (g != 0 ? g3(abs_err / std::fabs(g)) : std::string("-"));
  return line + (abs_err > allowed ? " > allowed " : " <= allowed ") + g3(allowed);
}

std::string repro_command(const std::string& program, const std::string& file, const std::string& case_name,
                          const std::string& extra) {
  std::string regex = "^";
  for (char c : case_name) {
    if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) regex += '\\';
    regex += c;
  }
  regex += "$";
  return program + " run " + shell_quote(file) + " --filter " + shell_quote(regex) + extra;
}

}  // namespace kvbench
