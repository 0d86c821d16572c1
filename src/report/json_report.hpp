#pragma once
// The machine-readable report of `kvbench run --json FILE` and `kvbench check --json FILE`
// (specs/report-format.md, specs/report.schema.json). Numbers are JSON numbers; a value
// that is not finite is null with its text ("nan", "inf", "-inf") in "<key>_text".
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cases/case_loader.hpp"
#include "runner/case_result.hpp"
#include "vk/runtime.hpp"

namespace kvbench {

// Bumped when a field changes meaning or goes away (adding one does not).
inline constexpr int kReportFormatVersion = 1;

// obj[key] = v, or null with obj[key + "_text"] = "nan"/"inf"/"-inf".
void put_number(nlohmann::json& obj, const std::string& key, double v);

// An operator's figure text ("1.57x", "161/252 token rows", "max_abs 0.0012, rel_l2 3e-4")
// as {"text": ..., plus its numbers}: "NAME NUMBER" parts give NAME: number, a part that
// starts with a number gives value (and "of" after a '/') and unit.
nlohmann::json figure_json(const std::string& text);

nlohmann::json case_result_json(const CaseResult& r);
// Invalid case files and cases: file, JSON pointer of the field at fault, message, case.
nlohmann::json invalid_cases_json(const std::vector<CaseFileError>& invalid);
nlohmann::json run_report_json(const DeviceInfo& device, const std::vector<CaseResult>& results,
                               const std::vector<CaseFileError>& invalid);

// JSON text that is always valid UTF-8: bytes of a path or name that are not are replaced.
std::string report_text(const nlohmann::json& j);

}  // namespace kvbench
