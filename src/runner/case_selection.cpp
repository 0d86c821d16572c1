#include "runner/case_selection.hpp"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/rng.hpp"
#include "runner/name_filter.hpp"

namespace kvbench {

bool Shard::contains(const std::string& case_name) const { return fnv1a64(case_name) % count == index - 1; }

std::optional<Shard> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos) return std::nullopt;
  try {
    size_t used_k = 0, used_n = 0;
    const auto k = std::stoull(text.substr(0, slash), &used_k);
    const auto n = std::stoull(text.substr(slash + 1), &used_n);
    if (used_k != slash || used_n != text.size() - slash - 1 || k < 1 || k > n) return std::nullopt;
    return Shard{k, n};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

NamedCases named_cases_from(const std::string& path) {
  NamedCases named{.file = path, .lines = {}};
  std::string text;
  try {
    text = read_text_file(path, 64ull << 20);
  } catch (const FileError& e) {
    throw std::invalid_argument("--cases-from " + path + ": " + e.what());
  }
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = line.substr(0, line.find('#'));
    const auto first = line.find_first_not_of(" \t\r"), last = line.find_last_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const std::string name = line.substr(first, last - first + 1);
    if (!named.lines.emplace(name, number).second)
      throw std::invalid_argument("--cases-from " + path + ":" + std::to_string(number) + ": " + name +
                                  " is named twice");
  }
  return named;
}

Selection select_cases(const std::vector<std::string>& paths, const SelectOptions& options,
                       const RunOptions& run) {
  std::vector<NameFilter> filters;
  for (const auto& f : options.filters) {
    try {
      filters.emplace_back(f);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("--filter '" + f + "' is not a valid regex: " + e.what());
    }
  }
  for (const auto& id : options.ops)
    if (!find_operator(id))
      throw std::invalid_argument("--op " + id + " is not an operator (see `kvbench ops`)");
  LoadedCases loaded = load_case_paths(paths, run);
  if (options.named) {
    std::set<std::string> loaded_names;
    for (const auto& d : loaded.cases) loaded_names.insert(d.name);
    for (const auto& [name, line] : options.named->lines)
      if (!loaded_names.count(name))
        throw std::invalid_argument("--cases-from " + options.named->file + ":" + std::to_string(line) +
                                    ": no case is named " + name);
  }
  Selection s;
  s.errors = std::move(loaded.errors);
  for (auto& def : loaded.cases) {
    if (options.named && !options.named->lines.count(def.name)) continue;
    bool kept = filters.empty();
    for (const auto& f : filters) kept = kept || f.matches(def.name);
    if (!kept) continue;
    if (!options.ops.empty() &&
        std::find(options.ops.begin(), options.ops.end(), def.op) == options.ops.end())
      continue;
    if (!options.shard.contains(def.name)) continue;
    if (options.rerun && !options.rerun->contains(def.name, def.file)) continue;
    if ((options.slow == SlowMode::exclude && def.slow) || (options.slow == SlowMode::only && !def.slow))
      continue;
    const Operator* op = find_operator(def.op);
    if (!op) {
      std::string known;
      for (const auto& id : operator_ids()) known += (known.empty() ? "" : ", ") + id;
      s.errors.push_back(
          {def.file, "/op", "unknown operator '" + def.op + "' (known: " + known + ")", def.name});
      continue;
    }
    try {
      auto instance = instantiate_case(*op, def, run);
      s.cases.push_back({std::move(def), std::move(instance)});
    } catch (const CaseError& e) {
      s.errors.push_back({def.file, e.pointer(), e.what(), def.name});
    }
  }
  return s;
}

}  // namespace kvbench
