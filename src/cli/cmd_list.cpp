#include <iostream>

#include "cli/commands.hpp"
#include "cli/selection_flags.hpp"

namespace kvbench {

void add_list_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("list", "List the expanded cases of case files with their parameters");
  static std::vector<std::string> paths;
  static SelectionFlags selection;
  cmd->add_option("paths", paths, "Case files or folders (searched recursively for *.json)")->required();
  selection.add_to(cmd);
  cmd->callback([&exit_code] {
    auto selected = selection.select(paths);
    if (!selected) {
      exit_code = 2;
      return;
    }
    Selection& s = *selected;
    for (const auto& c : s.cases) std::cout << c.def.name << "  " << c.def.op << "  " << c.op->description() << "\n";
    for (const auto& e : s.errors) std::cerr << "invalid case: " << e.to_string() << "\n";
    std::cout << s.cases.size() << " cases";
    if (!s.errors.empty()) std::cout << ", " << s.errors.size() << " invalid";
    std::cout << "\n";
    exit_code = s.errors.empty() ? 0 : 2;
  });
}

}  // namespace kvbench
