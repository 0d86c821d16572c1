#pragma once
// A backend's outputs against one golden case: the comparison `kvbench check` and the C++
// library (kvbench/check.hpp) share, so both judge an output the same way.
#include <functional>
#include <vector>

#include "check/output_text.hpp"
#include "golden/manifest.hpp"
#include "golden/safetensors.hpp"

namespace kvbench {

// Each output of `manifest` (its data in `golden`) compared with `actual_of(output)`, the
// backend's tensor of that output in the output's dtype and shape (valid until the next call). Throws
// std::runtime_error naming the file and tensor when a golden tensor is missing or malformed,
// when an output's check would take more than golden_memory_budget() (refused before it is
// read), and when a format-4 output's bound and NaN permissions accept any output.
std::vector<OutputResult> compare_with_golden(
    const GoldenManifest& manifest, const SafetensorsReader& golden,
    const std::function<const Tensor&(const ManifestOutput&)>& actual_of);

}  // namespace kvbench
