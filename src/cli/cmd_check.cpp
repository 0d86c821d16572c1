#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "golden/golden_case.hpp"
#include "golden/manifest.hpp"
#include "report/run_reporter.hpp"
#include "runner/case_selection.hpp"
#include "runner/name_filter.hpp"

namespace kvbench {
namespace fs = std::filesystem;

namespace {

struct Manifests {
  std::vector<GoldenManifest> found;
  std::vector<CaseFileError> invalid;  // each becomes an invalid-file report (exit 2)
};

// The case manifests under `golden`: a manifest, a case's .safetensors, or a folder of them.
// In a folder every *.json is a manifest unless it is valid JSON that neither claims to be
// one nor has a <stem>.safetensors beside it (a report someone saved there); a named file
// must be one.
Manifests golden_manifests(const std::string& golden) {
  Manifests out;
  auto add = [&out](const fs::path& p, bool named) {
    try {
      const nlohmann::json doc = read_manifest_json(p.string());
      if (!looks_like_manifest(doc)) {
        std::error_code ec;
        const bool has_data = fs::exists(fs::path(p).replace_extension(".safetensors"), ec);
        if (!named && !has_data) return;
        throw ManifestError("", "not a kvbench golden manifest (no case_hash or outputs)");
      }
      out.found.push_back(parse_manifest(doc, p.string()));
    } catch (const ManifestError& e) {
      out.invalid.push_back({p.string(), e.pointer(), e.what(), ""});
    }
  };
  std::error_code ec;
  if (fs::is_directory(golden, ec)) {
    std::vector<fs::path> files;
    try {
      for (const auto& e : fs::recursive_directory_iterator(golden))
        if (e.path().extension() == ".json" && e.is_regular_file(ec)) files.push_back(e.path());
    } catch (const fs::filesystem_error& e) {
      out.invalid.push_back({golden, "", std::string("cannot list the golden folder: ") + e.what(), ""});
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) add(f, false);
  } else {
    fs::path p(golden);
    if (p.extension() == ".safetensors") p.replace_extension(".json");
    add(p, true);
  }
  return out;
}

}  // namespace

void add_check_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("check", "Check another backend's outputs against golden files from `kvbench golden`");
  static std::string golden, actual;
  static std::vector<std::string> filters;
  static std::string shard = "1/1";
  static ReportFiles files;
  cmd->add_option("--golden", golden, "Golden folder (or one case's .json manifest or .safetensors)")->required();
  cmd->add_option("--actual", actual,
                  "Folder holding <stem>.safetensors per case, each output under its own tensor name "
                  "(or one file, with a single golden case)")
      ->required();
  cmd->add_option("--filter", filters,
                  "Check only cases whose name matches this POSIX extended regex (repeatable: any matches)")
      ->allow_extra_args(false);
  cmd->add_option("--shard", shard, "Check shard K of N (K/N)")
      ->check([](const std::string& v) { return parse_shard(v) ? "" : "--shard takes K/N with 1 <= K <= N"; });
  cmd->add_option("--json", files.json, "Also write the full report as JSON to this file");
  cmd->add_option("--junit", files.junit, "Also write a JUnit XML report to this file");
  cmd->footer("Same rows, closing line and exit status as `kvbench run`. Missing tensors and wrong dtypes or\n"
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
    Manifests manifests = golden_manifests(golden);
    std::vector<GoldenManifest> cases;
    for (auto& m : manifests.found)
      if (selected(m.name) && part.contains(m.name)) cases.push_back(std::move(m));
    if (cases.empty() && manifests.invalid.empty()) {
      std::cerr << "error: no golden case manifests under " << golden << " (write them with `kvbench golden`)\n";
      exit_code = 2;
      return;
    }
    std::error_code ec;
    const bool single_actual = !fs::is_directory(actual, ec);
    if (single_actual && cases.size() > 1) {
      std::cerr << "error: --actual " << actual << (fs::exists(actual, ec) ? " is a single file" : " does not exist") << " but "
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
    for (size_t i = 0; i < cases.size(); ++i) {
      reporter.starting(i);
      const std::string stem = fs::path(cases[i].path).stem().string();
      const std::string actual_file = single_actual ? actual : (fs::path(actual) / (stem + ".safetensors")).string();
      reporter.finished(check_golden_case(cases[i], actual_file),
                        program_path() + " check --golden '" + cases[i].path + "' --actual '" + actual_file + "'");
    }
    exit_code = reporter.finish(nullptr);
  });
}

}  // namespace kvbench
