#include "report/json_report.hpp"

#include <cmath>
#include <cstdlib>

#include "check/compare.hpp"

namespace kvbench {

void put_number(nlohmann::json& obj, const std::string& key, double v) {
  if (std::isfinite(v)) {
    obj[key] = v;
    return;
  }
  obj[key] = nullptr;
  obj[key + "_text"] = std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
}

namespace {

// The number at the start of `s` and what follows it, or nothing.
bool leading_number(const std::string& s, double& value, std::string& rest) {
  if (s.empty() ||
      !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '+' || s[0] == '.'))
    return false;
  char* end = nullptr;
  value = std::strtod(s.c_str(), &end);
  if (end == s.c_str()) return false;
  rest = end;
  return true;
}

// `s` is one number, "nan" and "inf" included.
bool whole_number(const std::string& s, double& value) {
  char* end = nullptr;
  value = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size();
}

bool is_name(const std::string& s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, s.find_last_not_of(' ') - b + 1);
}

}  // namespace

nlohmann::json figure_json(const std::string& text) {
  nlohmann::json j{{"text", text}};
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(", ", start);
    if (end == std::string::npos) end = text.size();
    const std::string part = trim(text.substr(start, end - start));
    start = end + 2;
    double v = 0;
    std::string rest;
    const auto space = part.find(' ');
    if (space != std::string::npos && is_name(part.substr(0, space)) &&
        whole_number(part.substr(space + 1), v)) {
      put_number(j, part.substr(0, space), v);  // "max_abs 0.0012", "max_abs nan"
    } else if (leading_number(part, v, rest)) {
      put_number(j, "value", v);  // "161/252 token rows", "11.4 KiB", "1.57x"
      double of = 0;
      std::string after;
      if (!rest.empty() && rest[0] == '/' && leading_number(rest.substr(1), of, after)) {
        put_number(j, "of", of);
        rest = after;
      }
      if (!trim(rest).empty()) j["unit"] = trim(rest);
    }
  }
  return j;
}

nlohmann::json case_result_json(const CaseResult& r) {
  nlohmann::json j{{"name", r.name}, {"file", r.file}, {"op", r.op}, {"status", status_name(r.status)}};
  put_number(j, "time_ms", r.time_ms);
  put_number(j, "device_ms", r.device_ms);
  if (!r.reason.empty()) j["reason"] = r.reason;
  j["resolved"] = r.resolved.is_object() ? r.resolved : nlohmann::json::object();
  j["outputs"] = nlohmann::json::array();
  for (const auto& o : r.outputs) {
    const Metrics& m = o.metrics;
    nlohmann::json out{{"tensor", m.tensor},       {"shape", o.shape},
                       {"elements", m.elements},   {"violations", m.violations},
                       {"boundary", m.boundary},   {"untouched_changed", m.untouched_changed},
                       {"unwritten", m.unwritten}, {"nonfinite_mismatches", m.nonfinite_mismatches}};
    put_number(out, "max_abs", m.max_abs);
    put_number(out, "max_rel", m.max_rel);
    put_number(out, "rel_l2", m.rel_l2);
    put_number(out, "scale", m.scale);
    put_number(out, "err_over_scale", m.err_over_scale());
    put_number(out, "max_over_tolerance", m.max_over_tolerance);
    out["per_element_bound"] = m.per_element_bound;
    out["tolerance"] = {{"atol", o.tolerance.atol}, {"rtol", o.tolerance.rtol}};
    if (!o.tolerance.reason.empty()) out["tolerance"]["reason"] = o.tolerance.reason;
    if (m.worst_index >= 0) {
      nlohmann::json w{{"flat_index", m.worst_index}, {"outside_written_region", m.worst_untouched}};
      std::vector<int64_t> index(o.shape.size());
      int64_t flat = m.worst_index;
      for (size_t k = o.shape.size(); k-- > 0;) {
        index[k] = o.shape[k] ? flat % o.shape[k] : 0;
        flat = o.shape[k] ? flat / o.shape[k] : 0;
      }
      w["index"] = index;
      put_number(w, "actual", m.worst_actual);
      put_number(w, "golden", m.worst_golden);
      out["worst"] = w;
    }
    j["outputs"].push_back(out);
  }
  j["figures"] = nlohmann::json::object();
  for (const auto& [label, value] : r.figures) j["figures"][label] = figure_json(value);
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
  nlohmann::json j{{"format_version", kReportFormatVersion}, {"kvbench_version", KVBENCH_VERSION}};
  // `kvbench check` runs no device: its report has none.
  j["device"] = device.name.empty()
                    ? nlohmann::json(nullptr)
                    : nlohmann::json{{"name", device.name}, {"type", device.type}, {"driver", device.driver}};
  size_t counts[3] = {0, 0, 0};
  j["cases"] = nlohmann::json::array();
  for (const auto& r : results) {
    ++counts[static_cast<int>(r.status)];
    j["cases"].push_back(case_result_json(r));
  }
  j["invalid"] = invalid_cases_json(invalid);
  j["summary"] = {
      {"passed", counts[0]}, {"failed", counts[1]}, {"skipped", counts[2]}, {"invalid", invalid.size()}};
  return j;
}

std::string report_text(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace kvbench
