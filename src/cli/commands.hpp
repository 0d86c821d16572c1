#pragma once
// One function per subcommand; each registers itself on the app and, when chosen,
// stores the process exit code in `exit_code`.
#include <CLI/CLI.hpp>

namespace kvbench {

void add_run_command(CLI::App& app, int& exit_code);
void add_list_command(CLI::App& app, int& exit_code);
void add_devices_command(CLI::App& app, int& exit_code);

}  // namespace kvbench
