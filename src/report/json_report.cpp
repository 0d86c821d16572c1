#include "report/json_report.hpp"

#include <cmath>

namespace kvbench {
namespace {

// JSON has no inf/NaN: write them as strings.
nlohmann::json num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

}  // namespace

nlohmann::json case_result_json(const CaseResult& r) {
  nlohmann::json j{{"name", r.name}, {"file", r.file}, {"op", r.op}, {"status", status_name(r.status)},
                   {"time_ms", r.time_ms}, {"device_ms", r.device_ms}};
  if (!r.reason.empty()) j["reason"] = r.reason;
  if (!r.resolved.is_null()) j["resolved"] = r.resolved;
  j["outputs"] = nlohmann::json::array();
  for (const auto& o : r.outputs) {
    const Metrics& m = o.metrics;
    nlohmann::json out{{"tensor", m.tensor}, {"elements", m.elements}, {"violations", m.violations},
                       {"boundary", m.boundary}, {"untouched_changed", m.untouched_changed},
                       {"nonfinite_mismatches", m.nonfinite_mismatches}, {"max_abs", num(m.max_abs)},
                       {"max_rel", num(m.max_rel)}, {"rel_l2", num(m.rel_l2)},
                       {"tolerance", {{"atol", o.tolerance.atol}, {"rtol", o.tolerance.rtol}}}};
    if (!o.tolerance.reason.empty()) out["tolerance"]["reason"] = o.tolerance.reason;
    if (m.worst_index >= 0)
      out["worst"] = {{"index", index_string(o.shape, m.worst_index)}, {"actual", num(m.worst_actual)},
                      {"golden", num(m.worst_golden)}};
    j["outputs"].push_back(out);
  }
  for (const auto& [label, value] : r.figures) j["figures"][label] = value;
  return j;
}

nlohmann::json invalid_cases_json(const std::vector<CaseFileError>& invalid) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& e : invalid)
    j.push_back({{"file", e.file}, {"pointer", e.pointer}, {"message", e.message}, {"case", e.case_name}});
  return j;
}

nlohmann::json run_report_json(const DeviceInfo& device, const std::vector<CaseResult>& results,
                               const std::vector<CaseFileError>& invalid) {
  nlohmann::json j{{"kvbench_version", KVBENCH_VERSION}};
  // `kvbench check` runs no device: its report has none.
  j["device"] = device.name.empty() ? nlohmann::json(nullptr)
                                    : nlohmann::json{{"name", device.name}, {"type", device.type}, {"driver", device.driver}};
  size_t counts[3] = {0, 0, 0};
  j["cases"] = nlohmann::json::array();
  for (const auto& r : results) {
    ++counts[static_cast<int>(r.status)];
    j["cases"].push_back(case_result_json(r));
  }
  j["invalid"] = invalid_cases_json(invalid);
  j["summary"] = {{"passed", counts[0]}, {"failed", counts[1]}, {"skipped", counts[2]}, {"invalid", invalid.size()}};
  return j;
}

}  // namespace kvbench
