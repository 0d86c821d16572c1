#pragma once
// The outcome of one expanded case: what every report (table, JSON) is made from.
#include <exception>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/output_text.hpp"
#include "ops/operator.hpp"

namespace kvbench {

enum class Status { pass, fail, skip };
const char* status_name(Status s);

struct CaseResult {
  std::string name, file, op;
  Status status = Status::pass;
  std::string reason;  // why it was skipped, or what failed beyond the metrics
  std::vector<OutputResult> outputs;
  CaseFigures figures;
  nlohmann::json resolved;  // attributes/shapes/inputs/dtypes as the case ran
  double time_ms = 0;       // wall time of the whole case (generate, reference, device, compare)
  double device_ms = 0;     // dispatch time from timestamp queries

  // Aggregates over outputs for the one-row summary.
  double max_abs() const;
  double max_rel() const;
  double rel_l2() const;
  size_t violations() const;
  size_t boundary() const;
  // "tensor[index] actual vs golden" of the worst failing output, for failure reports.
  std::string worst() const;
};

// A case that failed with an error before it had results (an exception from its run).
CaseResult error_result(const CaseDef& def, const OpCase& op, const std::exception& e);

}  // namespace kvbench
