#pragma once
// One function per subcommand; each registers itself on the app and, when chosen,
// stores the process exit code in `exit_code`.
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace kvbench {

class Runtime;
struct CaseDef;

// How kvbench was invoked (argv[0]), for the repro lines it prints.
std::string& program_path();
// The command that reruns just this case (check/output_text.hpp repro_command) with the
// flags of the run it came from (`extra`) and, for a case of a slow file, --slow include.
std::string case_repro(const CaseDef& def, const std::string& extra);

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
