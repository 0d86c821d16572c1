#pragma once
// The machine-readable report of `kvbench run --json FILE`.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cases/case_loader.hpp"
#include "runner/case_result.hpp"
#include "vk/runtime.hpp"

namespace kvbench {

nlohmann::json case_result_json(const CaseResult& r);
// Invalid case files and cases: file, JSON pointer of the field at fault, message, case.
nlohmann::json invalid_cases_json(const std::vector<CaseFileError>& invalid);
nlohmann::json run_report_json(const DeviceInfo& device, const std::vector<CaseResult>& results,
                               const std::vector<CaseFileError>& invalid);

}  // namespace kvbench
