#pragma once
// The terminal report: one row per case and a closing count line.
#include <cstdio>
#include <string>

#include "runner/case_result.hpp"

namespace kvbench {

// `s` padded or cut (with "...") to exactly `width` characters: a table column.
std::string fit(const std::string& s, size_t width);
std::string report_header(size_t name_width);
std::string report_row(const CaseResult& r, size_t name_width);
// "N passed, N failed, N skipped": the plain closing line CI systems read.
std::string report_summary(size_t passed, size_t failed, size_t skipped);

}  // namespace kvbench
