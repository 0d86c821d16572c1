#include <iostream>

#include "cli/commands.hpp"
#include "cli/selection_flags.hpp"
#include "runner/golden_case.hpp"
#include "runner/pipeline_list.hpp"
#include "vk/runtime.hpp"

namespace kvbench {

void add_list_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("list", "List the expanded cases of case files with their parameters");
  static std::vector<std::string> paths;
  static SelectionFlags selection;
  static bool pipelines = false;
  static bool hashes = false;
  static int device = -1;
  cmd->add_option("paths", paths, "Case files or folders (searched recursively for *.json)")->required();
  selection.add_to(cmd);
  cmd->add_flag(
      "--pipelines", pipelines,
      "Per case, the pipelines (shader:specialization constants) it creates on the device instead of its "
      "parameters, or why it skips; nothing is computed or compiled beyond creating them");
  cmd->add_flag(
         "--hashes", hashes,
         "Per case, tab-separated: its name, the case_hash its golden's manifest records (a cache of goldens "
         "is stale when it differs) and its case file")
      ->excludes("--pipelines");
  cmd->add_option("--device", device, "Vulkan device index for --pipelines (see `kvbench devices`)");
  cmd->callback([&exit_code] {
    selection.with_selection(paths, selection.run_options(), exit_code, [&](Selection& s) {
      size_t errors = 0;  // cases that met an error (list --pipelines)
      if (pipelines) {
        const std::unique_ptr<Runtime> rt = open_device(device);
        if (!rt) {
          exit_code = 2;
          return;
        }
        std::cout << "device: " << rt->info().name << " (" << rt->info().type << ")\n";
        errors = list_pipelines(*rt, s, std::cout);
      } else if (hashes) {
        for (const auto& c : s.cases)
          std::cout << c.def.name << '\t' << case_hash(c.def, *c.op) << '\t' << c.def.file << "\n";
      } else {
        for (const auto& c : s.cases)
          std::cout << c.def.name << "  " << c.def.op << "  " << c.op->description() << "\n";
      }
      for (const auto& e : s.errors) std::cerr << "invalid case: " << e.to_string() << "\n";
      std::ostream& summary = hashes ? std::cerr : std::cout;  // --hashes: only the table on stdout
      summary << s.cases.size() << " cases";
      if (!s.errors.empty()) summary << ", " << s.errors.size() << " invalid";
      if (errors) summary << ", " << errors << " with errors";
      summary << "\n";
      exit_code = s.errors.empty() && errors == 0 ? 0 : 2;
    });
  });
}

}  // namespace kvbench
