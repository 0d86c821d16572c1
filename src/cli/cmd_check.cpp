#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "golden/golden_case.hpp"
#include "report/run_reporter.hpp"
#include "runner/case_selection.hpp"

namespace kvbench {
namespace fs = std::filesystem;

namespace {

// The case manifests under `golden`: a manifest, a case's .safetensors, or a folder of them.
std::vector<std::string> golden_manifests(const std::string& golden) {
  std::vector<std::string> out;
  auto is_manifest = [](const fs::path& p) {
    if (p.extension() != ".json") return false;
    std::ifstream in(p);
    try {
      const auto j = nlohmann::json::parse(in);
      return j.is_object() && j.contains("case_hash") && j.contains("outputs");
    } catch (const std::exception&) {
      return false;
    }
  };
  if (fs::is_directory(golden)) {
    for (const auto& e : fs::recursive_directory_iterator(golden))
      if (e.is_regular_file() && is_manifest(e.path())) out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
  } else {
    fs::path p(golden);
    if (p.extension() == ".safetensors") p.replace_extension(".json");
    if (is_manifest(p)) out.push_back(p.string());
  }
  return out;
}

}  // namespace

void add_check_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("check", "Check another backend's outputs against golden files from `kvbench golden`");
  static std::string golden, actual;
  static std::string filter, shard = "1/1";
  static ReportFiles files;
  cmd->add_option("--golden", golden, "Golden folder (or one case's .json manifest or .safetensors)")->required();
  cmd->add_option("--actual", actual,
                  "Folder holding <stem>.safetensors per case, each output under its own tensor name "
                  "(or one file, with a single golden case)")
      ->required();
  cmd->add_option("--filter", filter, "Check only cases whose name matches this regex");
  cmd->add_option("--shard", shard, "Check shard K of N (K/N)")
      ->check([](const std::string& v) { return parse_shard(v) ? "" : "--shard takes K/N with 1 <= K <= N"; });
  cmd->add_option("--json", files.json, "Also write the full report as JSON to this file");
  cmd->add_option("--junit", files.junit, "Also write a JUnit XML report to this file");
  cmd->footer("Same rows, closing line and exit status as `kvbench run`. Missing tensors and wrong dtypes or\n"
              "shapes fail the case with a message naming the tensor.");
  cmd->callback([&exit_code] {
    std::regex re;
    try {
      re = std::regex(filter);
    } catch (const std::regex_error& e) {
      std::cerr << "error: --filter is not a valid regex: " << e.what() << "\n";
      exit_code = 2;
      return;
    }
    const Shard part = *parse_shard(shard);
    std::vector<std::pair<std::string, std::string>> cases;  // (manifest, case name)
    for (const auto& m : golden_manifests(golden)) {
      std::ifstream in(m);
      const std::string name = nlohmann::json::parse(in)["case"];
      if ((filter.empty() || std::regex_search(name, re)) && part.contains(name)) cases.emplace_back(m, name);
    }
    if (cases.empty()) {
      std::cerr << "error: no golden case manifests under " << golden << " (write them with `kvbench golden`)\n";
      exit_code = 2;
      return;
    }
    const bool single_actual = !fs::is_directory(actual);
    if (single_actual && cases.size() > 1) {
      std::cerr << "error: --actual is a single file but " << cases.size() << " golden cases were selected\n";
      exit_code = 2;
      return;
    }
    std::vector<std::string> names;
    for (const auto& c : cases) names.push_back(c.second);
    RunReporter reporter(names, {}, files);
    reporter.header("checking " + actual + " against " + golden);
    for (size_t i = 0; i < cases.size(); ++i) {
      reporter.starting(i);
      const std::string stem = fs::path(cases[i].first).stem().string();
      const std::string actual_file = single_actual ? actual : (fs::path(actual) / (stem + ".safetensors")).string();
      reporter.finished(check_golden_case(cases[i].first, actual_file),
                        program_path() + " check --golden '" + cases[i].first + "' --actual '" + actual_file + "'");
    }
    exit_code = reporter.finish(nullptr);
  });
}

}  // namespace kvbench
