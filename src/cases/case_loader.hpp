#pragma once
// Reads case files (or folders of them, recursively), checks them against the schema,
// and expands each file's sweep into named cases.
#include <cstdint>
#include <string>
#include <vector>

#include "cases/case_def.hpp"
#include "cases/case_file_error.hpp"
#include "core/run_options.hpp"

namespace kvbench {

struct LoadedCases {
  std::vector<CaseDef> cases;
  std::vector<CaseFileError> errors;
};

// Files ending in .json, folders searched recursively in sorted order. A file reached
// twice (through two paths) is read once. Whatever goes wrong with one file (reading,
// size, nesting, JSON, schema, sweep) is that file's error; the others still load.
// A sweep may expand to options.max_cases_per_file cases at most.
LoadedCases load_case_paths(const std::vector<std::string>& paths, const RunOptions& options);
// One document (already parsed) as if read from `file`.
LoadedCases expand_case_document(const nlohmann::json& doc, const std::string& file,
                                 const RunOptions& options);
// One case file's text (named `file` in errors): nesting bounded, parsed, expanded; every
// failure becomes an error of the file. What load_case_paths does for each file it reads.
LoadedCases load_case_text(const std::string& text, const std::string& file, const RunOptions& options);

}  // namespace kvbench
