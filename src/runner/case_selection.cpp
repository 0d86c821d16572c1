#include "runner/case_selection.hpp"

#include <regex>

#include "core/error.hpp"

namespace kvbench {

Selection select_cases(const std::vector<std::string>& paths, const std::string& filter) {
  const std::regex re(filter);
  LoadedCases loaded = load_case_paths(paths);
  Selection s;
  s.errors = std::move(loaded.errors);
  for (auto& def : loaded.cases) {
    if (!filter.empty() && !std::regex_search(def.name, re)) continue;
    const Operator* op = find_operator(def.op);
    if (!op) {
      std::string known;
      for (const auto& id : operator_ids()) known += (known.empty() ? "" : ", ") + id;
      s.errors.push_back({def.file, "/op", "unknown operator '" + def.op + "' (known: " + known + ")", def.name});
      continue;
    }
    try {
      auto instance = op->instantiate(def);
      s.cases.push_back({std::move(def), std::move(instance)});
    } catch (const CaseError& e) {
      s.errors.push_back({def.file, e.pointer(), e.what(), def.name});
    }
  }
  return s;
}

}  // namespace kvbench
