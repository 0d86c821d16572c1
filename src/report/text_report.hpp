#pragma once
// The terminal report: one row per case, the details of a failure, and a closing count line.
#include <string>

#include "report/name_column.hpp"
#include "runner/case_result.hpp"

namespace kvbench {

// A row: the counter and status before the name column, the figures after it.
inline constexpr size_t kRowIndent = 12;        // "%5zu " + "%-4s  "
inline constexpr size_t kRowFiguresWidth = 63;  // "  " + max_abs .. time

std::string report_header(const NameColumn& column);
// The case's row; a failing case adds its failure lines (report/failure_text.hpp) below.
std::string report_row(const CaseResult& r, const NameColumn& column);
// "N passed, N failed, N skipped": the plain closing line CI systems read.
std::string report_summary(size_t passed, size_t failed, size_t skipped);

}  // namespace kvbench
