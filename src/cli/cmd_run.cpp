#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <regex>

#include "cli/commands.hpp"
#include "report/json_report.hpp"
#include "report/text_report.hpp"
#include "runner/case_selection.hpp"
#include "runner/run_case.hpp"
#include "vk/runtime.hpp"

namespace kvbench {

void add_run_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("run", "Run cases on the Vulkan backend and report each against the golden reference");
  static std::vector<std::string> paths;
  static std::string filter, json_path;
  static int device = -1;
  cmd->add_option("paths", paths, "Case files or folders (searched recursively for *.json)")->required();
  cmd->add_option("--filter", filter, "Run only cases whose expanded name matches this regex");
  cmd->add_option("--device", device, "Vulkan device index (see `kvbench devices`; default: first GPU, else lavapipe)");
  cmd->add_option("--json", json_path, "Also write the full report as JSON to this file");
  cmd->footer(
      "Exit status: 0 all passed; 1 a case failed; 2 unusable arguments, invalid case files or no device.\n"
      "Columns: max_abs/max_rel/rel_l2 over all outputs, viol = elements out of tolerance,\n"
      "bound = elements accepted only as the +-1 neighbour at a rounding boundary.");
  cmd->callback([&exit_code] {
    Selection sel;
    try {
      sel = select_cases(paths, filter);
    } catch (const std::regex_error& e) {
      std::cerr << "error: --filter is not a valid regex: " << e.what() << "\n";
      exit_code = 2;
      return;
    }
    for (const auto& e : sel.errors) std::cerr << "invalid case: " << e.to_string() << "\n";

    std::unique_ptr<Runtime> rt;
    try {
      rt = std::make_unique<Runtime>(device >= 0 ? std::optional<int>(device) : std::nullopt);
    } catch (const std::exception& e) {
      std::cerr << "error: " << e.what() << "\n";
      exit_code = 2;
      return;
    }
    const bool tty = isatty(STDOUT_FILENO);
    std::cout << "device: " << rt->info().name << " (" << rt->info().type << ")\n";
    size_t width = 16;
    for (const auto& c : sel.cases) width = std::max(width, c.def.name.size());
    width = std::min<size_t>(width, 72);
    std::cout << "      " << report_header(width) << "\n";

    std::vector<CaseResult> results;
    size_t counts[3] = {0, 0, 0};
    const size_t total = sel.cases.size();
    for (size_t i = 0; i < total; ++i) {
      const auto& c = sel.cases[i];
      if (tty) std::cout << "\r[" << i + 1 << "/" << total << "] " << c.def.name.substr(0, 60) << "\x1b[K" << std::flush;
      CaseResult r;
      try {
        r = run_case(c.def, *c.op, *rt);
      } catch (const std::exception& e) {
        r = CaseResult{.name = c.def.name, .file = c.def.file, .op = c.def.op, .status = Status::fail,
                       .reason = std::string("error: ") + e.what()};
      }
      ++counts[static_cast<int>(r.status)];
      if (tty) std::cout << "\r\x1b[K";
      char prefix[32];
      std::snprintf(prefix, sizeof prefix, "%5zu ", i + 1);
      std::cout << prefix << report_row(r, width);
      if (r.status == Status::fail && !r.reason.empty()) std::cout << "  " << r.reason;
      std::cout << "\n";
      results.push_back(std::move(r));
    }
    if (!sel.errors.empty()) std::cout << sel.errors.size() << " invalid cases (see the messages above)\n";
    std::cout << report_summary(counts[0], counts[1], counts[2]) << "\n";
    if (!json_path.empty()) {
      std::ofstream out(json_path);
      out << run_report_json(rt->info(), results, sel.errors).dump(2) << "\n";
      if (!out) {
        std::cerr << "error: cannot write " << json_path << "\n";
        exit_code = 2;
        return;
      }
    }
    exit_code = !sel.errors.empty() ? 2 : counts[1] > 0 ? 1 : 0;
  });
}

}  // namespace kvbench
