// `kvbench shrink CASE_FILE`: the smallest case that fails as a failing case does
// (src/runner/shrink.hpp), written as a case file of its own.
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/selection_flags.hpp"
#include "core/file_io.hpp"
#include "core/shell_quote.hpp"
#include "runner/golden_case.hpp"
#include "runner/backend.hpp"
#include "runner/run_case.hpp"
#include "runner/shrink.hpp"
#include "vk/runtime.hpp"

namespace kvbench {
namespace fs = std::filesystem;

void add_shrink_command(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("shrink", "Reduce a failing case to the smallest case that fails the same way");
  static std::string path, output;
  static SelectionFlags selection;
  static BackendCommand backend;
  static int device = -1, max_runs = 200;
  selection.slow = "include";  // the case named is the one to shrink, slow or not
  cmd->add_option("case_file", path, "The case file (its first failing case, or the one --filter names)")
      ->required();
  selection.add_to(cmd);
  cmd->add_option("--backend", backend.command,
                  "Run the cases on this backend command instead of Vulkan ({golden} and {actual} replaced, "
                  "as in `run`)");
  cmd->add_option("--backend-timeout", backend.timeout_s,
                  "Seconds a --backend command may run per case (default 600)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--device", device, "Vulkan device index (see `kvbench devices`)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-o,--output", output,
                  "Where to write the smallest case file (default: ./<case stem>_shrunk.json)");
  cmd->add_option("--max-runs", max_runs, "Most candidate cases to run (default 200)")
      ->check(CLI::PositiveNumber);
  cmd->footer(
      "Reduces the sizes the operator declares (kvbench ops: \"sizes\") one at a time, each to the least "
      "value\n"
      "that still fails the same way (the same output tensor; mismatch, NaN/Inf or crash) and that the\n"
      "operator's constraints accept; prints every candidate and writes the smallest failing case.\n"
      "Exit status: 0 written; 1 no selected case fails; 2 unusable arguments, invalid case files, no "
      "device.");
  cmd->callback([&exit_code] {
    selection.with_selection({path}, selection.run_options(), exit_code, [&](Selection& sel) {
      for (const auto& e : sel.errors) std::cerr << "invalid case: " << e.to_string() << "\n";
      if (sel.cases.empty()) {
        exit_code = 2;
        return;
      }
      if (!backend.command.empty() && device >= 0) {
        std::cerr << "error: --backend runs another implementation: --device is for the Vulkan one\n";
        exit_code = 2;
        return;
      }
      std::unique_ptr<Runtime> rt;
      if (backend.command.empty() && !(rt = open_device(device))) {
        exit_code = 2;
        return;
      }
      const CaseRunner runner = [&](const CaseDef& def, const OpCase& op) {
        return rt ? run_case(def, op, *rt) : run_case_on_backend(def, op, backend);
      };
      std::cout << "on " << (rt ? "device: " + rt->info().name : "backend: " + backend.command) << "\n";
      // The first selected case that fails.
      const SelectedCase* failing = nullptr;
      Failure target;
      for (auto& c : sel.cases) {
        c.op->skip_figures();
        CaseResult r;
        try {
          r = runner(c.def, *c.op);
        } catch (const std::exception& e) {
          r.status = Status::fail;
          r.reason = e.what();
        }
        target = failure_of(r);
        std::cout << c.def.name << ": "
                  << (target.kind == Failure::none ? status_name(r.status) : target.text()) << "  ("
                  << c.op->describe() << ")\n";
        if (target.kind != Failure::none) {
          failing = &c;
          break;
        }
      }
      if (!failing) {
        std::cout << "no selected case fails: nothing to shrink\n";
        exit_code = 1;
        return;
      }
      std::cout << "shrinking " << failing->def.name << ": " << target.text() << "\n";
      const ShrinkOutcome out =
          shrink_case(failing->def, failing->op->args().options(), target, runner, max_runs,
                      [](const std::string& line) { std::cout << line << std::endl; });
      const std::string stem = case_file_stem(failing->def.name) + "_shrunk";
      const std::string file = output.empty() ? stem + ".json" : output;
      const fs::path folder =
          fs::path(file).parent_path().empty() ? fs::path(".") : fs::path(file).parent_path();
      bool outside = false;
      const auto smallest =
          instantiate_case(*find_operator(out.smallest.op), out.smallest, failing->op->args().options());
      const std::string description = "kvbench shrink: the smallest case found that fails as " +
                                      failing->def.name + " of " + failing->def.file + " does (" +
                                      target.text() + "): " + smallest->describe();
      const nlohmann::json doc =
          standalone_case_document(out.smallest, stem, description, folder.string(), outside);
      try {
        write_file_atomically(file, doc.dump(2) + "\n");
      } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << "\n";
        exit_code = 2;
        return;
      }
      std::ostringstream timeout;
      timeout << backend.timeout_s;
      std::cout << (out.out_of_runs
                        ? "stopped after --max-runs " + std::to_string(max_runs) +
                              " candidates; smallest so far: "
                        : "smallest failing case after " + std::to_string(out.runs) + " candidates: ")
                << smallest->describe() << "\nwritten to " << file << "\nrepro: " << program_path() << " run "
                << shell_quote(file)
                << (backend.command.empty() ? "" : " --backend " + shell_quote(backend.command))
                << (backend.command.empty() || backend.timeout_s == 600
                        ? ""
                        : " --backend-timeout " + timeout.str())
                << (outside ? " --allow-outside-paths" : "") << "\n";
    });
  });
}

}  // namespace kvbench
