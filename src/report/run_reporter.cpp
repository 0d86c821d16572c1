#include "report/run_reporter.hpp"

#include <algorithm>
#include <iostream>

#include "core/file_io.hpp"
#include "report/json_report.hpp"
#include "report/junit_report.hpp"
#include "report/text_report.hpp"

namespace kvbench {

RunReporter::RunReporter(std::vector<std::string> names, std::vector<CaseFileError> invalid,
                         ReportFiles files, size_t row_indent, size_t figures_width)
    : names_(std::move(names)), invalid_(std::move(invalid)), files_(std::move(files)) {
  terminal_ = terminal_columns();
  column_ = name_column(names_, row_indent, figures_width, terminal_);
  for (const auto& e : invalid_) std::cerr << "invalid case: " << e.to_string() << "\n";
}

bool RunReporter::open_reports() {
  try {
    if (!files_.json.empty()) {
      nlohmann::json j = run_report_json(DeviceInfo{}, {}, invalid_);
      j["complete"] = false;
      j["interrupted"] = false;
      j["summary"]["selected"] = names_.size();
      write_file_atomically(files_.json, report_text(j));
    }
    if (!files_.junit.empty()) write_file_atomically(files_.junit, junit_incomplete_xml());
  } catch (const FileError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return false;
  }
  return true;
}

void RunReporter::add_invalid(CaseFileError error) {
  if (terminal_) std::cout << "\r\x1b[K" << std::flush;
  std::cerr << "invalid case: " << error.to_string() << "\n";
  invalid_.push_back(std::move(error));
}

void RunReporter::header(const std::string& first_line, const std::string& table_header) {
  std::cout << first_line << "\n      " << (table_header.empty() ? report_header(column_) : table_header)
            << "\n";
}

void RunReporter::starting(size_t index) {
  if (!terminal_) return;
  // One line that fits the terminal, or \r cannot return to its start.
  std::cout << "\r" << progress_line(index, names_.size(), names_[index], *terminal_) << "\x1b[K"
            << std::flush;
}

bool RunReporter::finished(CaseResult r, const std::string& repro, const std::string& row) {
  if (terminal_) std::cout << "\r\x1b[K";
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "%5zu ", results_.size() + 1);
  std::cout << prefix << (row.empty() ? report_row(r, column_) : row);
  const bool failed = r.status == Status::fail;
  if (failed && !repro.empty()) std::cout << "\n      repro: " << repro;
  std::cout << "\n" << std::flush;
  results_.push_back(std::move(r));
  repro_.push_back(repro);
  return failed;
}

int RunReporter::finish(const DeviceInfo* device, int interrupted_by) {
  // The closing lines are printed whatever happened to the log before (a write that failed
  // once must not silence the summary a CI job reads).
  std::cout.clear();
  size_t counts[3] = {0, 0, 0};
  for (const auto& r : results_) ++counts[static_cast<int>(r.status)];
  if (!invalid_.empty()) std::cout << invalid_.size() << " invalid cases (see the messages above)\n";
  if (interrupted_by)
    std::cout << "interrupted by signal " << interrupted_by << " after " << results_.size() << " of "
              << names_.size() << " cases\n";
  std::cout << report_summary(counts[0], counts[1], counts[2]) << "\n";
  // The failures again, together at the end of a long log, each with its repro line.
  if (counts[1] > 0) {
    std::cout << "failed cases:\n";
    for (size_t i = 0; i < results_.size(); ++i)
      if (results_[i].status == Status::fail)
        std::cout << "  " << results_[i].name << "\n"
                  << (repro_[i].empty() ? "" : "      repro: " + repro_[i] + "\n");
  }
  int status = interrupted_by ? 128 + interrupted_by : !invalid_.empty() ? 2 : counts[1] > 0 ? 1 : 0;
  auto write = [&status](const std::string& path, const std::string& text) {
    try {
      write_file_atomically(path, text);
    } catch (const FileError& e) {
      std::cerr << "error: " << e.what() << "\n";
      status = 2;
    }
  };
  if (!files_.json.empty()) {
    nlohmann::json j = run_report_json(device ? *device : DeviceInfo{}, results_, invalid_);
    j["complete"] = true;
    j["interrupted"] = interrupted_by != 0;
    j["summary"]["selected"] = names_.size();
    write(files_.json, report_text(j));
  }
  if (!files_.junit.empty()) write(files_.junit, junit_xml(results_, invalid_, repro_));
  std::cout << std::flush;
  return status;
}

}  // namespace kvbench
