#pragma once
// --failed-from REPORT: the cases an earlier `kvbench run --json` report lists as failed or
// invalid, to rerun just those.
#include <set>
#include <string>

namespace kvbench {

struct RerunSet {
  std::set<std::string> names;  // cases that failed, or were invalid by name
  std::set<std::string> files;  // case files invalid as a whole (no case name): all their cases
  bool contains(const std::string& case_name, const std::string& file) const;
};

// Reads REPORT (a run or check --json report). Throws std::invalid_argument naming the
// file and what is wrong when it is not one.
RerunSet failed_cases_from(const std::string& report_path);

}  // namespace kvbench
