#pragma once
// The data path of one case: generate inputs -> reference (double) -> poison outputs ->
// Vulkan -> compare -> result.
#include <string>

#include "runner/case_result.hpp"

namespace kvbench {

class Runtime;

// With `save_actual_dir`, the device's outputs are also written to
// <save_actual_dir>/<stem>.safetensors in the golden file format (each output under its own
// name, in-place tensors whole), which `kvbench check` reads as another backend's.
CaseResult run_case(const CaseDef& def, const OpCase& op, Runtime& rt,
                    const std::string& save_actual_dir = "");

}  // namespace kvbench
