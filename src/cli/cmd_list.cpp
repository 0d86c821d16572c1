#include <iostream>
#include <set>

#include "cli/commands.hpp"
#include "cli/selection_flags.hpp"
#include "core/error.hpp"
#include "vk/runtime.hpp"

namespace kvbench {

namespace {

// `list --pipelines`: per case the pipelines (shader and specialization constants, as the
// runtime keys them) that running it on the device would create, or why it would skip.
// Nothing is computed: the runtime records no dispatch (Runtime::plan_only).
void list_pipelines(Runtime& rt, const Selection& s) {
  rt.plan_only(true);
  for (const auto& c : s.cases) {
    std::cout << c.def.name << "  ";
    if (auto reason = c.op->skip_reason(rt.info())) {
      std::cout << "skipped: " << *reason << "\n";
      continue;
    }
    try {
      TensorSet io = c.op->make_tensors();
      c.op->run_vulkan(rt, io);
    } catch (const SkipCase& skip) {
      std::cout << "skipped: " << skip.what() << "\n";
      rt.take_pipeline_log();
      continue;
    }
    std::set<std::string> seen;
    std::cout << "pipelines:";
    for (const auto& key : rt.take_pipeline_log())
      if (seen.insert(key).second) std::cout << " " << key;
    std::cout << "\n";
  }
}

}  // namespace

void add_list_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("list", "List the expanded cases of case files with their parameters");
  static std::vector<std::string> paths;
  static SelectionFlags selection;
  static bool pipelines = false;
  static int device = -1;
  cmd->add_option("paths", paths, "Case files or folders (searched recursively for *.json)")->required();
  selection.add_to(cmd);
  cmd->add_flag(
      "--pipelines", pipelines,
      "Per case, the pipelines (shader:specialization constants) it creates on the device instead of its "
      "parameters, or why it skips; nothing is computed or compiled beyond creating them");
  cmd->add_option("--device", device, "Vulkan device index for --pipelines (see `kvbench devices`)");
  cmd->callback([&exit_code] {
    selection.with_selection(paths, selection.run_options(), exit_code, [&](Selection& s) {
      if (pipelines) {
        const std::unique_ptr<Runtime> rt = open_device(device);
        if (!rt) {
          exit_code = 2;
          return;
        }
        std::cout << "device: " << rt->info().name << " (" << rt->info().type << ")\n";
        try {
          list_pipelines(*rt, s);
        } catch (const std::exception& e) {
          std::cerr << "error: " << e.what() << "\n";
          exit_code = 2;
          return;
        }
      } else {
        for (const auto& c : s.cases)
          std::cout << c.def.name << "  " << c.def.op << "  " << c.op->description() << "\n";
      }
      for (const auto& e : s.errors) std::cerr << "invalid case: " << e.to_string() << "\n";
      std::cout << s.cases.size() << " cases";
      if (!s.errors.empty()) std::cout << ", " << s.errors.size() << " invalid";
      std::cout << "\n";
      exit_code = s.errors.empty() ? 0 : 2;
    });
  });
}

}  // namespace kvbench
