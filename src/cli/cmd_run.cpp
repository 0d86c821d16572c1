#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "cli/commands.hpp"
#include "cli/selection_flags.hpp"
#include "core/shell_quote.hpp"
#include "core/parallel.hpp"
#include "report/run_reporter.hpp"
#include "runner/backend.hpp"
#include "runner/case_loop.hpp"
#include "runner/interrupt.hpp"
#include "runner/pipeline_warmer.hpp"
#include "runner/run_case.hpp"
#include "vk/runtime.hpp"

namespace kvbench {

namespace {

// A repro line reruns a case the way it was loaded: with its files outside its folder too.
std::string outside_paths_flag(const RunOptions& options) {
  return options.allow_outside_paths ? " --allow-outside-paths" : "";
}

// Per operator: cases run and skipped, and the first skip's reason.
class SkipTally {
 public:
  void add(const CaseResult& r) {
    auto& t = ops_[r.op];
    ++t.cases;
    if (r.status != Status::skip) return;
    if (t.skipped++ == 0) t.reason = r.reason;
  }
  // One line per operator whose every case skipped ("" when none did).
  std::string all_skipped() const {
    std::string out;
    for (const auto& [op, t] : ops_)
      if (t.cases > 0 && t.skipped == t.cases)
        out += "all " + std::to_string(t.cases) + " cases of " + op + " skipped, e.g.: " + t.reason + "\n";
    return out;
  }

 private:
  struct Tally {
    size_t cases = 0, skipped = 0;
    std::string reason;
  };
  std::map<std::string, Tally> ops_;
};

}  // namespace

std::string& program_path() {
  static std::string path = "kvbench";
  return path;
}

std::string case_repro(const CaseDef& def, const std::string& extra) {
  return repro_command(program_path(), def.file, def.name, extra + (def.slow ? " --slow include" : ""));
}

void add_run_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "run", "Run cases on the Vulkan backend and report each against the golden reference");
  static std::vector<std::string> paths;
  static SelectionFlags selection;
  static ReportFiles files;
  static int device = -1;
  static bool fail_fast = false;
  static bool allow_skip = false;
  static std::string save_actual;
  static unsigned threads = 0;
  static int compile_threads = -1;
  static BackendCommand backend;
  cmd->add_option("paths", paths, "Case files or folders (searched recursively for *.json)")->required();
  selection.add_to(cmd);
  cmd->add_option("--device", device,
                  "Vulkan device index (see `kvbench devices`; default: first GPU, else lavapipe)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("-x,--fail-fast", fail_fast, "Stop after the first failing case");
  cmd->add_flag(
      "--allow-skip", allow_skip,
      "Accept an operator whose every selected case skips on this device (otherwise exit 1: a run that "
      "checked nothing of an operator is not a pass)");
  cmd->add_option("--save-actual", save_actual,
                  "Also write each case's device outputs to DIR/<stem>.safetensors in the golden file format "
                  "(for `kvbench check`, numpy, tools/plot.py)");
  cmd->add_option(
         "--threads", threads,
         "Threads of each case's double-precision reference (default: hardware threads; the golden is "
         "byte-identical for any value)")
      ->check(CLI::Range(1u, 256u));
  cmd->add_option(
         "--compile-threads", compile_threads,
         "Threads that compile the cases' pipelines ahead of the run, each on a device of its own (default: "
         "on a CPU device such as lavapipe, which compiles at a pipeline's first dispatch, its other "
         "hardware threads, at most 3; on a GPU 0). Results never depend on it")
      ->check(CLI::Range(0, 16));
  cmd->add_option(
      "--backend", backend.command,
      "Check another implementation instead of Vulkan: per case, write its golden to a temporary folder, "
      "run this shell command with {golden} and {actual} replaced by the folders (e.g. 'python3 "
      "tools/example_backend.py {golden} {actual}'), and check the <stem>.safetensors it writes");
  cmd->add_option("--backend-timeout", backend.timeout_s,
                  "Seconds a --backend command may run per case (default 600)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--json", files.json, "Also write the full report as JSON to this file");
  cmd->add_option("--junit", files.junit,
                  "Also write a JUnit XML report (one testcase per case) to this file");
  cmd->footer(
      "Exit status: 0 all passed; 1 a case failed, or every case of an operator skipped (the device lacks "
      "what\n"
      "they need; --allow-skip accepts that); 2 unusable arguments, invalid case files or no device.\n"
      "Columns: max_abs = largest |actual - golden|; err/scale = max_abs / max|golden| of the output\n"
      "(unlike |a-g|/|g|, not inflated by a golden near zero); rel_l2 = ||a-g|| / ||g||; viol = elements\n"
      "out of tolerance; bound = elements accepted only as the +-1 neighbour at a rounding boundary.\n"
      "A failing case prints its tolerance, worst element and a repro line (the command that reruns\n"
      "just that case); the failed cases are listed again after the closing line.");
  cmd->callback([&exit_code] {
    const RunOptions options = selection.run_options(threads);
    selection.with_selection(paths, options, exit_code, [&](Selection& sel) {
      if (!save_actual.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(save_actual, ec);
        if (ec || !std::filesystem::is_directory(save_actual)) {
          std::cerr << "error: --save-actual " << save_actual << ": cannot make the folder"
                    << (ec ? " (" + ec.message() + ")" : "") << "\n";
          exit_code = 2;
          return;
        }
      }
      if (!backend.command.empty() && (device >= 0 || !save_actual.empty())) {
        std::cerr << "error: --backend checks another implementation: --device and --save-actual are for the "
                     "Vulkan one\n";
        exit_code = 2;
        return;
      }
      std::vector<std::string> names;
      for (const auto& c : sel.cases) names.push_back(c.def.name);
      RunReporter reporter(names, sel.errors, files);
      if (!reporter.open_reports()) {
        exit_code = 2;
        return;
      }
      // On Vulkan, or (--backend) on another implementation, which skips a case it does not
      // implement (exit 77).
      std::unique_ptr<Runtime> rt;
      std::string extra = outside_paths_flag(options);
      if (backend.command.empty()) {
        if (!(rt = open_device(device))) {
          exit_code = 2;
          return;
        }
        reporter.header("device: " + rt->info().name + " (" + rt->info().type + ")");
        extra = (device >= 0 ? " --device " + std::to_string(device) : "") + extra;
      } else {
        reporter.header("backend: " + backend.command);
        std::ostringstream timeout;
        timeout << backend.timeout_s;
        extra = " --backend " + shell_quote(backend.command) +
                (backend.timeout_s != 600 ? " --backend-timeout " + timeout.str() : "") + extra;
        for (auto& c : sel.cases) c.op->skip_figures();
      }
      install_interrupt_handler();
      std::optional<PipelineWarmer> warmer;
      if (rt) {
        const unsigned warm_threads = compile_threads >= 0 ? static_cast<unsigned>(compile_threads)
                                                           : default_warmer_threads(rt->info().type == "cpu");
        if (warm_threads > 0 && sel.cases.size() > 1) warmer.emplace(sel, rt->info().index, warm_threads);
      }
      SkipTally skips;
      for_each_case(sel.cases, fail_fast, [&](size_t i, const SelectedCase& c) {
        if (warmer) warmer->reached(i);
        reporter.starting(i);
        CaseResult r;
        try {
          r = rt ? run_case(c.def, *c.op, *rt, save_actual) : run_case_on_backend(c.def, *c.op, backend);
        } catch (const std::exception& e) {
          r = error_result(c.def, *c.op, e);
        }
        skips.add(r);
        return reporter.finished(std::move(r), case_repro(c.def, extra));
      });
      warmer.reset();
      exit_code = reporter.finish(rt ? &rt->info() : nullptr, interrupt_signal());
      if (exit_code == 0 && !allow_skip)
        if (const auto all = skips.all_skipped(); !all.empty()) {
          std::cout << all << "error: every selected case of the operator(s) above skipped on "
                    << (rt ? rt->info().name : std::string("the backend"))
                    << ": nothing of them was checked (exit 1; --allow-skip accepts it)\n";
          exit_code = 1;
        }
    });
  });
}

}  // namespace kvbench
