#pragma once
// The console side of `kvbench run`, `check` and `bench`: progress on a TTY, one plain row
// per case otherwise, the repro line of each failure, the closing count line, and run's
// JSON and JUnit files. The commands report through it, so their output is the same.
#include <string>
#include <vector>

#include "cases/case_loader.hpp"
#include "report/name_column.hpp"
#include "report/text_report.hpp"
#include "runner/case_result.hpp"
#include "vk/runtime.hpp"

namespace kvbench {

struct ReportFiles {
  std::string json;   // "" for none
  std::string junit;  // "" for none
};

class RunReporter {
 public:
  // `row_indent` and `figures_width`: the columns a row takes before and after the name
  // (run's table, or bench's: kBenchRowIndent, kBenchFiguresWidth).
  RunReporter(std::vector<std::string> names, std::vector<CaseFileError> invalid, ReportFiles files,
              size_t row_indent = kRowIndent, size_t figures_width = kRowFiguresWidth);
  // Writes the report files as "incomplete" (JSON "complete": false; JUnit one error test
  // case saying the run did not finish), before any case runs: a run killed before finish()
  // leaves those, never the previous run's reports, and a target that cannot be written
  // (not a regular file, a folder that is not there or not writable, a full disk) is found
  // now. Returns false after printing the error.
  bool open_reports();
  // `first_line`, then the table's header (run's unless `table_header` is given).
  void header(const std::string& first_line, const std::string& table_header = "");
  const NameColumn& column() const { return column_; }
  // Progress (TTY only) before a case runs.
  void starting(size_t index);
  // Prints the case's row (run's, unless `row` is given: bench's) and, when it failed,
  // `repro`: the command that reruns just this case. Returns whether it failed.
  bool finished(CaseResult result, const std::string& repro, const std::string& row = "");
  // A case found invalid while the run goes on (a golden whose data fails its checksum).
  void add_invalid(CaseFileError error);
  // Prints the invalid-case count, the closing line and the failed cases with their repro
  // lines, replaces the incomplete report files with the final ones, and returns the exit
  // status: 2 invalid cases (or an unwritable report), 1 failures, 0.
  // With `interrupted_by` a signal number, the run stopped early: the closing line says so,
  // the reports mark it, and the status is 128 + the signal.
  int finish(const DeviceInfo* device, int interrupted_by = 0);

 private:
  std::vector<std::string> names_;
  std::vector<CaseFileError> invalid_;
  ReportFiles files_;
  std::vector<CaseResult> results_;
  std::vector<std::string> repro_;
  std::optional<size_t> terminal_;  // its width, when stdout is a terminal
  NameColumn column_;
};

}  // namespace kvbench
