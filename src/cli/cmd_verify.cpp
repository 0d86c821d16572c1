// kvbench verify GOLDEN_DIR: a golden folder checked on its own, before it is trusted (after a
// copy between machines, an interrupted write, a disk error): every case's manifest read and
// its data file's tensors compared with the checksums the manifest records.
#include <iostream>

#include "cli/commands.hpp"
#include "golden/checksum.hpp"
#include "golden/golden_folder.hpp"

namespace kvbench {

void add_verify_command(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("verify", "Verify golden files against the checksums their manifests record");
  static std::vector<std::string> paths;
  cmd->add_option("golden", paths, "Golden folders (or one case's .json manifest or .safetensors)")
      ->required();
  cmd->footer(
      "Per case: OK, or BAD with the file and the tensor at fault. Also reported: manifests that cannot be\n"
      "read, data files that are missing or have no manifest, and goldens of format 1 or 2 (no checksums).\n"
      "Exit status: 0 every case verified, 2 anything else.");
  cmd->callback([&exit_code] {
    size_t ok = 0, bad = 0;
    auto report_bad = [&bad](const std::string& what) {
      std::cout << "BAD  " << what << "\n";
      ++bad;
    };
    for (const auto& path : paths) {
      const GoldenFolder folder = scan_golden(path);
      for (const auto& e : folder.invalid) report_bad(e.to_string());
      for (const auto& d : folder.orphan_data)
        report_bad(d + ": no manifest names this data file (its <stem>.json is missing)");
      for (const auto& m : folder.found) {
        if (m.format < 3) {
          report_bad(
              m.path + ": golden format " + std::to_string(m.format) +
              " records no checksums, so its data cannot be verified (write it again with this kvbench)");
          continue;
        }
        try {
          verify_golden_data(m);
          std::cout << "OK   " << m.name << "\n";
          ++ok;
        } catch (const ManifestError& e) {
          report_bad(m.path + ": " + e.pointer() + ": " + e.what());
        }
      }
      if (folder.found.empty() && folder.invalid.empty() && folder.orphan_data.empty())
        report_bad(path + ": no golden case manifests (write them with `kvbench golden`)");
    }
    std::cout << ok << " verified, " << bad << " bad\n";
    exit_code = bad ? 2 : 0;
  });
}

}  // namespace kvbench
