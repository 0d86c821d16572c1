#pragma once
// `kvbench coverage`: what a suite exercises of each operator's declared signature
// (specs/case-format.md "Coverage"): every enumerated value (allowed values, booleans, small
// integer ranges, dtype choices) with the cases using it, the values never used, the value
// pairs of two enumerated keys never combined although the operator allows them, and the
// range of every other integer key with its boundary values. "Allowed" is decided by the
// operator's own constraint checker on probe cases: a suite case with the value(s) set.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/case_selection.hpp"

namespace kvbench {

struct CoveredValue {
  nlohmann::json value;
  size_t cases = 0;
  std::optional<bool> allowed;  // probed for values no case uses: whether some probe case accepts it
};

// An enumerated key: a parameter ("attributes/sparseMode") or a tensor's dtype ("dtypes/key").
struct EnumeratedKey {
  std::string section, key;
  std::vector<CoveredValue> values;
  std::string name() const { return section + "/" + key; }
};

struct ValuePair {
  std::string a_key, b_key;  // names as EnumeratedKey::name()
  nlohmann::json a, b;
};

struct IntegerRange {
  std::string section, key;
  size_t cases = 0;  // cases that have the key
  int64_t min = 0, max = 0;
  // 0, 1 and the declared maximum where the key may take them, and whether a case does.
  std::vector<std::pair<int64_t, bool>> boundaries;
};

struct OperatorCoverage {
  std::string op;
  size_t cases = 0;
  std::vector<EnumeratedKey> enumerated;
  size_t pair_combinations = 0, pairs_covered = 0, pairs_not_allowed = 0;
  std::vector<ValuePair> pairs_never_combined;  // allowed, never in one case
  std::vector<IntegerRange> integers;
  size_t probes = 0;  // probe cases instantiated
};

std::vector<OperatorCoverage> compute_coverage(const std::vector<SelectedCase>& cases);

// The terminal table; `max_pairs` pairs listed per operator (the JSON has all).
std::string coverage_table(const std::vector<OperatorCoverage>& report, size_t max_pairs = 20);
nlohmann::json coverage_json(const std::vector<OperatorCoverage>& report);

}  // namespace kvbench
