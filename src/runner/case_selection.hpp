#pragma once
// Loads case paths, keeps the cases whose names match a filter, and instantiates each
// through the operator registry. Invalid files and cases become errors; the rest run.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cases/case_loader.hpp"
#include "ops/operator.hpp"
#include "runner/failed_from.hpp"

namespace kvbench {

struct SelectedCase {
  CaseDef def;
  std::unique_ptr<OpCase> op;
};

struct Selection {
  std::vector<SelectedCase> cases;
  std::vector<CaseFileError> errors;
};

// Shard K of N (1-based): the cases with fnv1a64(name) % N == K - 1. N jobs with
// K = 1..N cover every case exactly once, whatever order the files are read in.
struct Shard {
  uint64_t index = 1, count = 1;
  bool contains(const std::string& case_name) const;
};
// "K/N" with 1 <= K <= N, or nullopt.
std::optional<Shard> parse_shard(const std::string& text);

// Case files may mark themselves "slow" (long sweeps kept out of the default gate).
enum class SlowMode { exclude, include, only };

// --cases-from FILE: whole case names, one a line ('#' starts a comment), with their lines.
struct NamedCases {
  std::string file;
  std::map<std::string, int> lines;
};
// Throws std::invalid_argument naming the file (and line) when it cannot be read or names a case twice.
NamedCases named_cases_from(const std::string& path);

struct SelectOptions {
  // POSIX extended regexes searched in each expanded case name: a case is kept when it
  // matches any of them (none keeps all).
  std::vector<std::string> filters;
  std::vector<std::string> ops;  // operator ids: a case is kept when its op is one of them (none keeps all)
  Shard shard;
  SlowMode slow = SlowMode::exclude;
  std::optional<RerunSet> rerun;    // --failed-from: only these cases
  std::optional<NamedCases> named;  // --cases-from: only these cases, each of which must exist
};

// Throws std::invalid_argument for a malformed filter, an unknown operator id, or a
// --cases-from name that no case file under `paths` expands to (a renamed case must not
// silently leave a list). Files are loaded, and cases instantiated, under `run`.
Selection select_cases(const std::vector<std::string>& paths, const SelectOptions& options,
                       const RunOptions& run);

}  // namespace kvbench
