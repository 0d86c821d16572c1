#pragma once
// One function per subcommand; each registers itself on the app and, when chosen,
// stores the process exit code in `exit_code`.
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace kvbench {

class Runtime;

// How kvbench was invoked (argv[0]), for the repro lines it prints.
std::string& program_path();

// The Vulkan device of --device (-1: the default one), or nullptr after printing why it
// cannot be opened (run, bench and shrink then exit 2).
std::unique_ptr<Runtime> open_device(int device);

void add_run_command(CLI::App& app, int& exit_code);
void add_bench_command(CLI::App& app, int& exit_code);
void add_golden_command(CLI::App& app, int& exit_code);
void add_check_command(CLI::App& app, int& exit_code);
void add_verify_command(CLI::App& app, int& exit_code);
void add_list_command(CLI::App& app, int& exit_code);
void add_ops_command(CLI::App& app, int& exit_code);
void add_devices_command(CLI::App& app, int& exit_code);
void add_shrink_command(CLI::App& app, int& exit_code);
void add_coverage_command(CLI::App& app, int& exit_code);

}  // namespace kvbench
