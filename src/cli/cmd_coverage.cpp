// `kvbench coverage PATH...`: what the cases under PATH exercise of each operator's
// declared signature (src/coverage/coverage.hpp).
#include <iostream>

#include "cli/commands.hpp"
#include "cli/selection_flags.hpp"
#include "core/file_io.hpp"
#include "coverage/coverage.hpp"
#include "coverage/fault_coverage.hpp"

namespace kvbench {

void add_coverage_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("coverage",
                                 "Show which declared values, value pairs and boundaries the cases exercise");
  static std::vector<std::string> paths;
  static SelectionFlags selection;
  static std::string json;
  static size_t max_pairs = 20;
  static bool faults = false, variants = false;
  cmd->add_option("paths", paths, "Case files or folders (searched recursively for *.json)")->required();
  selection.add_to(cmd);
  cmd->add_option("--json", json, "Also write the whole report (every pair) as JSON to this file");
  // A bound that a terminal listing never needs to pass: "-1" (which would wrap to 2^64 - 1)
  // and numbers past 64 bits are refused with the range, exit 2.
  constexpr size_t kMaxPairs = 100000;
  cmd->add_option("--pairs", max_pairs,
                  "Uncombined value pairs listed per operator on the terminal, 0 to 100000 (default 20; "
                  "--json holds every pair)")
      ->check(CLI::Range(size_t{0}, kMaxPairs));
  cmd->add_flag("--faults", faults,
                "Instead: which cases detect each kernel fault of the operators' catalogues (reference only, "
                "no device)");
  cmd->add_flag("--variants", variants,
                "Instead: every permitted implementation of the operators' catalogues against every case's "
                "golden and bound (reference only, no device)")
      ->excludes("--faults");
  cmd->footer(
      "Per operator, from its declaration (kvbench ops) and the expanded cases: every enumerated value "
      "(allowed\n"
      "values, booleans, integer ranges of at most 17 values, dtype choices) with the number of cases using "
      "it;\n"
      "the values never used that the operator's constraint checker accepts on a probe (a suite case with "
      "the\n"
      "value set); the value pairs of two enumerated keys no case combines although a probe accepts them; "
      "and\n"
      "each other integer key's range with its boundary values. Exit 0 (2: unusable arguments, no case).\n"
      "With --faults: per case, each fault that applies with its largest error over the case's tolerance "
      "('-': not\n"
      "detected); per operator, each fault's detecting cases or, undetected, its nearest miss "
      "(specs/coverage.md).\n"
      "Exit 1 when a fault of an operator with cases is undetected.\n"
      "With --variants: per case, each permitted implementation that applies with its largest error over "
      "the case's\n"
      "bound ('-': within it); per operator, the cases each applies to and those it fails "
      "(specs/comparison.md).\n"
      "Exit 1 when a permitted implementation fails a case.");
  cmd->callback([&exit_code] {
    selection.with_selection(paths, selection.run_options(), exit_code, [&](Selection& sel) {
      for (const auto& e : sel.errors) std::cerr << "invalid case (not counted): " << e.to_string() << "\n";
      if (sel.cases.empty()) {
        std::cerr << "error: no valid case to count\n";
        exit_code = 2;
        return;
      }
      // --json, when given: false (and exit 2) when it cannot be written.
      const auto write_json = [&exit_code](const nlohmann::json& doc) {
        if (json.empty()) return true;
        try {
          write_file_atomically(json, doc.dump(1) + "\n");
          return true;
        } catch (const std::exception& e) {
          std::cerr << "error: --json: " << e.what() << "\n";
          exit_code = 2;
          return false;
        }
      };
      if (faults) {
        const FaultCoverage report = compute_fault_coverage(
            sel.cases, [](const CaseFaults& c) { std::cout << fault_case_line(c) << std::flush; });
        std::cout << "\n" << fault_table(report);
        if (write_json(fault_json(report))) exit_code = report.undetected() ? 1 : 0;
        return;
      }
      if (variants) {
        const FaultCoverage report = compute_fault_coverage(
            sel.cases, [](const CaseFaults& c) { std::cout << fault_case_line(c) << std::flush; },
            Planting::variants);
        std::cout << "\n" << variant_table(report);
        if (write_json(variant_json(report))) exit_code = failed_variants(report) ? 1 : 0;
        return;
      }
      const auto report = compute_coverage(sel.cases);
      std::cout << coverage_table(report, max_pairs);
      if (write_json(coverage_json(report))) exit_code = 0;
    });
  });
}

}  // namespace kvbench
