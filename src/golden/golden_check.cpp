#include "golden/golden_check.hpp"

#include "golden/expected_arrays.hpp"

namespace kvbench {

std::vector<OutputResult> compare_with_golden(
    const GoldenManifest& m, const SafetensorsReader& golden,
    const std::function<const Tensor&(const ManifestOutput&)>& actual_of) {
  std::vector<OutputResult> results;
  const uint64_t budget = golden_memory_budget();
  for (const ManifestOutput& out : m.outputs) {
    check_output_memory(golden, out, budget);  // before anything of it is allocated
    Tensor expected = load_tensor(golden, out.expected, out);
    const Tensor before = out.role == Role::inplace ? load_tensor(golden, out.name, out) : Tensor();
    const Tensor& got = actual_of(out);
    Expected e = load_expected(golden, out, m.format, std::move(expected));
    e.tolerance = out.tolerance;  // a bound read with the golden decides where it has one
    // (A plain output has no untouched element: compare reads no initial bits.)
    results.push_back({compare_output(e, got, e.is_in_place() ? before : e.value()), e.tolerance, out.shape});
  }
  return results;
}

}  // namespace kvbench
