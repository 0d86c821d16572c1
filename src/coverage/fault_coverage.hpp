#pragma once
// `kvbench coverage --faults`: which cases detect which kernel faults (specs/coverage.md
// "Fault coverage"); `--variants`: that every permitted implementation passes every case
// (specs/comparison.md "Permitted implementations"). Every case's golden is computed once; then, per fault
// its operator declares (Signature::faults), the reference with that fault planted, compared as an actual
// output against the golden with the case's own tolerance (check/compare.hpp). A fault applies to a case when
// its faulted output differs from the golden in some bit; it is detected when some element fails (error over
// tolerance above 1, or a code or NaN/Inf mismatch).
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ops/fault.hpp"
#include "runner/case_selection.hpp"

namespace kvbench {

// Which catalogue of the operators' signatures a run plants: their kernel faults (each
// should fail some case) or their permitted implementations (each must pass every case).
enum class Planting { faults, variants };

// A catalogue entry of either kind: Fault (what = its bug) or Variant.
struct Planted {
  std::string name, what, source;
};

// One fault (or variant) on one case.
struct FaultOnCase {
  std::string fault;
  double over_tolerance = 0;  // the largest over its outputs (+inf: a mismatch no tolerance takes)
  bool detected = false;
  std::string error;  // the faulted reference failed (then not detected)
};

struct CaseFaults {
  std::string name, op;
  std::vector<FaultOnCase> faults;  // those that apply
  std::string error;                // the case's own golden failed
};

struct FaultSummary {
  Planted fault;
  size_t applies = 0;                    // cases it applies to
  std::vector<std::string> detected_by;  // cases that detect it
  double max_over_tolerance = 0;         // the largest over every case
  std::string nearest_miss;              // undetected: the case that came closest
  double nearest_miss_over_tolerance = 0;
};

struct OperatorFaults {
  std::string op;
  size_t cases = 0;
  std::vector<FaultSummary> faults;
};

struct FaultCoverage {
  std::vector<CaseFaults> cases;
  std::vector<OperatorFaults> operators;  // the operators that have cases
  // Faults no case detects, over every operator.
  size_t undetected() const;
};

// Runs every case's reference once plus once per fault of its operator, one case at a time
// with its faults on the reference threads, so memory stays one case's inputs, its golden
// and one faulted golden per thread. `done` is called after each case.
// With Planting::variants the same run for every permitted implementation: `detected` then
// means the variant fails a case (a bound that does not take it).
FaultCoverage compute_fault_coverage(const std::vector<SelectedCase>& cases,
                                     const std::function<void(const CaseFaults&)>& done = {},
                                     Planting planting = Planting::faults);

// A case's row: "NAME: fault ratio, ..." (a ratio followed by '-' when not detected).
std::string fault_case_line(const CaseFaults& c);
// Per operator: each fault detected by how many cases and its largest error over the
// tolerance, or UNDETECTED with its nearest miss.
std::string fault_table(const FaultCoverage& report);
nlohmann::json fault_json(const FaultCoverage& report);

// The report of a Planting::variants run: per operator, each variant with the cases it
// applies to and those it fails (there must be none), and its largest error over a case's
// bound; JSON {"operators": {ID: {"variants": [{"name", "what", "source", "cases",
// "failed_by", "max_error_over_tolerance"}]}}, "failed": N}.
std::string variant_table(const FaultCoverage& report);
nlohmann::json variant_json(const FaultCoverage& report);
// Variants that fail some case, over every operator.
size_t failed_variants(const FaultCoverage& report);

}  // namespace kvbench
