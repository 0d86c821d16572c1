// kvbench: reference-and-conformance testbench for KV-cache and attention kernels.
#include <csignal>
#include <iostream>
#include <string>

#include "cli/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"kvbench " KVBENCH_VERSION
               " -- reference-and-conformance testbench for KV-cache and attention kernels.\n"
               "Case files (JSON) describe an operator's attributes and shapes; a double-precision\n"
               "reference gives the golden results; the Vulkan implementation is checked against them."};
  // A file-size limit (ulimit -f) makes a write fail with EFBIG, which kvbench reports like
  // a full disk, instead of killing the process mid-file with SIGXFSZ.
  std::signal(SIGXFSZ, SIG_IGN);
  app.require_subcommand(1);
  app.set_version_flag("--version", KVBENCH_VERSION);
  int exit_code = 0;
  kvbench::program_path() = argc > 0 ? argv[0] : "kvbench";
  kvbench::add_run_command(app, exit_code);
  kvbench::add_bench_command(app, exit_code);
  kvbench::add_golden_command(app, exit_code);
  kvbench::add_check_command(app, exit_code);
  kvbench::add_verify_command(app, exit_code);
  kvbench::add_list_command(app, exit_code);
  kvbench::add_ops_command(app, exit_code);
  kvbench::add_devices_command(app, exit_code);
  kvbench::add_shrink_command(app, exit_code);
  kvbench::add_coverage_command(app, exit_code);
  // A first word that names no subcommand: say so, rather than CLI11's "A subcommand is required".
  std::string names;
  bool known = false;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    names += (names.empty() ? "" : ", ") + sub->get_name();
    known |= argc > 1 && sub->get_name() == argv[1];
  }
  if (argc > 1 && argv[1][0] != '-' && !known) {
    std::cerr << "error: unknown subcommand '" << argv[1] << "'; the subcommands are " << names
              << " (kvbench --help)\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;  // unusable arguments exit 2, like invalid case files
  }
  return exit_code;
}
