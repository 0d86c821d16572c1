#pragma once
// The data path of one case: generate inputs -> reference (double) -> poison outputs ->
// Vulkan -> compare -> result.
#include "runner/case_result.hpp"

namespace kvbench {

class Runtime;

CaseResult run_case(const CaseDef& def, const OpCase& op, Runtime& rt);

}  // namespace kvbench
