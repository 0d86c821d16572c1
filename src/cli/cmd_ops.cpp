#include <iostream>

#include "cli/commands.hpp"
#include "ops/operator.hpp"

namespace kvbench {

// Prints each operator's signature from its declaration, so the docs cannot drift.
void add_ops_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("ops", "Show each operator's signature: case-file keys, defaults, tensors");
  static std::vector<std::string> ids;
  static bool as_json = false;
  cmd->add_option("ids", ids, "Operator ids (default: all)");
  cmd->add_flag("--json", as_json, "Print the signatures as JSON");
  cmd->callback([&exit_code] {
    std::vector<const Operator*> chosen;
    for (const auto& id : ids) {
      const Operator* op = find_operator(id);
      if (!op) {
        std::string known;
        for (const auto& k : operator_ids()) known += (known.empty() ? "" : ", ") + k;
        std::cerr << "unknown operator '" << id << "' (known: " << known << ")\n";
        exit_code = 2;
        return;
      }
      chosen.push_back(op);
    }
    if (chosen.empty()) chosen = operators();
    if (as_json) {
      nlohmann::json j = nlohmann::json::array();
      for (const Operator* op : chosen) j.push_back(op->signature().to_json());
      std::cout << j.dump(2) << "\n";
      return;
    }
    for (size_t i = 0; i < chosen.size(); ++i)
      std::cout << (i ? "\n" : "") << chosen[i]->signature().describe();
  });
}

}  // namespace kvbench
