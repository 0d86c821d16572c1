#include <algorithm>
#include <iostream>

#include "bench/bench_case.hpp"
#include "bench/copy_bandwidth.hpp"
#include "cli/commands.hpp"
#include "cli/selection_flags.hpp"
#include "core/file_io.hpp"
#include "report/bench_report.hpp"
#include "report/json_report.hpp"
#include "report/run_reporter.hpp"
#include "runner/case_loop.hpp"
#include "vk/runtime.hpp"

namespace kvbench {

void add_bench_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("bench",
                                 "Time cases on the Vulkan backend and compare their effective bandwidth "
                                 "with the device's copy bandwidth");
  static std::vector<std::string> paths;
  static SelectionFlags selection;
  static Repetitions reps;
  static std::string json;
  static int device = -1;
  static bool flush_cache = false;
  static size_t cache_mib = 128;
  cmd->add_option("paths", paths, "Case files or folders (searched recursively for *.json)")->required();
  selection.add_to(cmd);
  cmd->add_option("--device", device,
                  "Vulkan device index (see `kvbench devices`; default: first GPU, else lavapipe)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--warmup", reps.warmup,
                  "Untimed warm-up runs at least, before the timed ones (default 2, at most 10000)")
      ->check(CLI::Range(0, 10000));
  cmd->add_option("--warmup-ms", reps.warmup_ms,
                  "And at least this much device time of warm-up (default 200, at least 200)")
      ->check(CLI::Range(200.0, 60000.0));
  cmd->add_option(
         "--reps", reps.reps,
         "Timed runs, back to back; the table gives their median, min and max (default 10, at most 10000)")
      ->check(CLI::Range(1, 10000));
  cmd->add_flag("--flush-cache", flush_cache,
                "Fill a buffer of twice --cache-mib between timed runs (untimed), so K/V come from memory");
  cmd->add_option("--cache-mib", cache_mib,
                  "The last-level cache size --flush-cache assumes, in MiB (default 128: H100/H200 L2 50 MB, "
                  "MI300X 256 MB)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--json", json, "Also write the results as JSON to this file");
  cmd->footer(
      "Each case is checked once against the golden (status PASS/FAIL/SKIP), then its Vulkan implementation "
      "runs once\n"
      "with its dispatches repeated in one submission: an untimed warm-up of at least --warmup-ms of device "
      "time (which\n"
      "raises a GPU's clock), then --reps back-to-back runs timed with timestamp queries, then a probe of "
      "the shader clock\n"
      "(VK_KHR_shader_clock; 'unknown' without it). MB_moved = the bytes the operator must read and write at "
      "least;\n"
      "GB/s = MB_moved / median time; %copy = GB/s as a share of the device's copy bandwidth (a uvec4 copy "
      "of\n"
      "64 MiB read through a texel view, measured once per run); GFLOPS = the definition's FLOPs (attention: "
      "2 * (Dk + Dv) per visible\n"
      "query row, key and head) / median time, '-' for operators that count none. Exit status: 0 all timed "
      "cases correct; 1 a case failed; 2 unusable\n"
      "arguments, invalid case files or no device.");
  cmd->callback([&exit_code] {
    selection.with_selection(paths, selection.run_options(), exit_code, [&](Selection& sel) {
      std::vector<std::string> names;
      for (const auto& c : sel.cases) names.push_back(c.def.name);
      RunReporter reporter(names, sel.errors, {}, kBenchRowIndent,
                           kBenchFiguresWidth);  // prints the invalid cases
      if (!json.empty()) try {  // a target that cannot take the report is found before the timing, not after
          check_output_target(json);
        } catch (const FileError& e) {
          std::cerr << "error: " << e.what() << "\n";
          exit_code = 2;
          return;
        }
      const std::unique_ptr<Runtime> rt = open_device(device);
      if (!rt) {
        exit_code = 2;
        return;
      }
      CopyBandwidth copy;
      std::vector<std::unique_ptr<Buffer>> flush;
      try {
        std::cout << "device: " << rt->info().name << " (" << rt->info().type << ")\n" << std::flush;
        // Twice the cache, in buffers no larger than the device lets one storage buffer be.
        const size_t most = std::max<size_t>(16, rt->info().max_storage_buffer_range / 16 * 16);
        reps.flush.clear();
        for (size_t left = flush_cache ? 2 * (cache_mib << 20) : 0; left > 0; left -= std::min(left, most)) {
          flush.push_back(rt->buffer(std::min(left, most)));
          reps.flush.push_back(flush.back().get());
        }
        copy = measure_copy_bandwidth(*rt, reps);
      } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << "\n";
        exit_code = 2;
        return;
      }
      reporter.header(copy_bandwidth_line(copy, reps), bench_header(reporter.column()));
      const std::string extra = device >= 0 ? " --device " + std::to_string(device) : "";
      std::vector<BenchResult> results;
      for_each_case(sel.cases, false, [&](size_t i, const SelectedCase& c) {
        reporter.starting(i);
        BenchResult r = bench_case(c.def, *c.op, *rt, reps, copy.gbps);
        const std::string row = bench_row(r, reporter.column(), reps);
        results.push_back(r);
        // The comparison's details are `run`'s job: the repro line points at the command that shows them.
        return reporter.finished(std::move(r.check), case_repro(c.def, extra), row);
      });
      exit_code = reporter.finish(nullptr);
      if (!json.empty()) try {
          write_file_atomically(json,
                                report_text(bench_report_json(rt->info(), copy, reps, results, sel.errors)));
        } catch (const FileError& e) {
          std::cerr << "error: " << e.what() << "\n";
          exit_code = 2;
        }
    });
  });
}

}  // namespace kvbench
