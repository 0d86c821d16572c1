#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "golden/checksum.hpp"
#include "runner/golden_case.hpp"
#include "golden/golden_folder.hpp"
#include "report/run_reporter.hpp"
#include "runner/case_selection.hpp"
#include "runner/name_filter.hpp"

namespace kvbench {
namespace fs = std::filesystem;

void add_check_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "check", "Check another backend's outputs against golden files from `kvbench golden`");
  static std::string golden, actual;
  static std::vector<std::string> filters;
  static std::string shard = "1/1";
  static ReportFiles files;
  cmd->add_option("--golden", golden, "Golden folder (or one case's .json manifest or .safetensors)")
      ->required();
  cmd->add_option("--actual", actual,
                  "Folder holding <stem>.safetensors per case, each output under its own tensor name "
                  "(or one file, with a single golden case)")
      ->required();
  cmd->add_option("--filter", filters,
                  "Check only cases whose name matches this POSIX extended regex (repeatable: any matches)")
      ->allow_extra_args(false);
  cmd->add_option("--shard", shard, "Check shard K of N (K/N)")->check([](const std::string& v) {
    return parse_shard(v) ? "" : "--shard takes K/N with 1 <= K <= N";
  });
  cmd->add_option("--json", files.json, "Also write the full report as JSON to this file");
  cmd->add_option("--junit", files.junit, "Also write a JUnit XML report to this file");
  cmd->footer(
      "Same rows, closing line and exit status as `kvbench run`. Missing tensors and wrong dtypes or\n"
      "shapes fail the case with a message naming the tensor.");
  cmd->callback([&exit_code] {
    std::vector<NameFilter> keep;
    try {
      for (const auto& f : filters) keep.emplace_back(f);
    } catch (const std::invalid_argument& e) {
      std::cerr << "error: --filter is not a valid regex: " << e.what() << "\n";
      exit_code = 2;
      return;
    }
    const auto selected = [&](const std::string& name) {
      if (keep.empty()) return true;
      for (const auto& f : keep)
        if (f.matches(name)) return true;
      return false;
    };
    const Shard part = *parse_shard(shard);
    GoldenFolder manifests = scan_golden(golden);
    std::vector<GoldenManifest> cases;
    for (auto& m : manifests.found)
      if (selected(m.name) && part.contains(m.name)) cases.push_back(std::move(m));
    if (cases.empty() && manifests.invalid.empty()) {
      std::cerr << "error: no golden case manifests under " << golden
                << " (write them with `kvbench golden`)\n";
      exit_code = 2;
      return;
    }
    std::error_code ec;
    const bool single_actual = !fs::is_directory(actual, ec);
    if (single_actual && cases.size() > 1) {
      std::cerr << "error: --actual " << actual
                << (fs::exists(actual, ec) ? " is a single file" : " does not exist") << " but "
                << cases.size() << " golden cases were selected\n";
      exit_code = 2;
      return;
    }
    std::vector<std::string> names;
    for (const auto& c : cases) names.push_back(c.name);
    RunReporter reporter(names, std::move(manifests.invalid), files);
    if (!reporter.open_reports()) {
      exit_code = 2;
      return;
    }
    reporter.header("checking " + actual + " against " + golden);
    size_t unverified = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      reporter.starting(i);
      // The golden's own bytes first: a corrupt golden would misjudge the backend.
      unverified += cases[i].format < 3;
      try {
        verify_golden_data(cases[i]);
      } catch (const ManifestError& e) {
        reporter.add_invalid({cases[i].path, e.pointer(), e.what(), cases[i].name});
        continue;
      }
      const std::string stem = fs::path(cases[i].path).stem().string();
      const std::string actual_file =
          single_actual ? actual : (fs::path(actual) / (stem + ".safetensors")).string();
      reporter.finished(
          check_golden_case(cases[i], actual_file),
          program_path() + " check --golden '" + cases[i].path + "' --actual '" + actual_file + "'");
    }
    if (unverified)
      std::cout << "note: " << unverified
                << " golden case(s) of format 1 or 2 carry no checksums: their data was not "
                << "verified (write them again with this kvbench)\n";
    exit_code = reporter.finish(nullptr);
  });
}

}  // namespace kvbench
