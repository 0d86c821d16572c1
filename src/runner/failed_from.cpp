#include "runner/failed_from.hpp"

#include <filesystem>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/file_io.hpp"

namespace kvbench {
namespace fs = std::filesystem;

namespace {

// Reports of the full suite are a few MB; this bounds what a wrong path can make us read.
constexpr uint64_t kMaxReportBytes = 1ull << 30;

// Two spellings of one file compare equal (relative/absolute, "./", links).
std::string same_file_key(const std::string& path) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

}  // namespace

bool RerunSet::contains(const std::string& case_name, const std::string& file) const {
  return names.count(case_name) || files.count(same_file_key(file));
}

RerunSet failed_cases_from(const std::string& report_path) {
  const std::string where = "--failed-from " + report_path + ": ";
  nlohmann::json report;
  try {
    report = nlohmann::json::parse(read_text_file(report_path, kMaxReportBytes));
  } catch (const FileError& e) {
    throw std::invalid_argument(where + e.what());
  } catch (const nlohmann::json::exception&) {
    throw std::invalid_argument(where + "not JSON (write the report with `kvbench run --json FILE`)");
  }
  if (!report.is_object() || !report.contains("cases") || !report["cases"].is_array())
    throw std::invalid_argument(where + "not a kvbench run report (no \"cases\" list)");
  if (report.value("complete", true) == false)
    throw std::invalid_argument(
        where + "the report of a run that did not finish (\"complete\": false): it lists no results");
  RerunSet set;
  for (const auto& c : report["cases"])
    if (c.is_object() && c.value("status", "") == "FAIL" && c.contains("name") && c["name"].is_string())
      set.names.insert(c["name"].get<std::string>());
  if (report.contains("invalid") && report["invalid"].is_array())
    for (const auto& e : report["invalid"]) {
      if (!e.is_object()) continue;
      const std::string name = e.value("case", ""), file = e.value("file", "");
      if (!name.empty())
        set.names.insert(name);
      else if (!file.empty())
        set.files.insert(same_file_key(file));
    }
  return set;
}

}  // namespace kvbench
