// kvbench::check (include/kvbench/check.hpp): the comparison of `kvbench check`
// (src/golden/golden_check.cpp) over an implementation's arrays or file.
#include "kvbench/check.hpp"

#include <set>
#include <stdexcept>

#include "api/access.hpp"
#include "golden/expected_arrays.hpp"
#include "golden/golden_check.hpp"

namespace kvbench {
namespace {

std::vector<int64_t> multi_index(const Shape& shape, int64_t flat) {
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0 && flat >= 0;) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return index;
}

OutputCheck from(const OutputResult& o) {
  const Metrics& m = o.metrics;
  return {.name = m.tensor,
          .elements = m.elements,
          .violations = m.violations,
          .nonfinite_mismatches = m.nonfinite_mismatches,
          .untouched_changed = m.untouched_changed,
          .boundary = m.boundary,
          .max_abs = m.max_abs,
          .max_rel = m.max_rel,
          .rel_l2 = m.rel_l2,
          .scale = m.scale,
          .max_over_tolerance = m.max_over_tolerance,
          .worst = m.worst_index >= 0 ? multi_index(o.shape, m.worst_index) : std::vector<int64_t>{},
          .worst_actual = m.worst_actual,
          .worst_golden = m.worst_golden,
          .worst_allowed = m.worst_allowed,
          .per_element_bound = m.per_element_bound};
}

// The comparison, with whatever goes wrong on the way (`error`, found before it, included)
// as the result's error.
CheckResult judge(const Golden& golden, std::string error,
                  const std::function<const Tensor&(const ManifestOutput&)>& actual_of) {
  const GoldenAccess::Impl& g = GoldenAccess::of(golden);
  CheckResult r{.name = g.manifest.name, .error = std::move(error)};
  std::string lines;
  try {
    if (r.error.empty())
      for (const OutputResult& o : compare_with_golden(g.manifest, *g.data, actual_of)) {
        r.outputs.push_back(from(o));
        if (!o.metrics.passed()) lines += "  " + violations_line(o) + "\n  " + worst_line(o) + "\n";
      }
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  if (!r.error.empty()) lines += "  error: " + r.error + "\n";
  if (!r.passed()) r.report = "FAIL " + r.name + "\n" + lines + "  repro: " + golden.repro() + "\n";
  return r;
}

}  // namespace

bool CheckResult::passed() const {
  if (!error.empty() || outputs.empty()) return false;
  for (const OutputCheck& o : outputs)
    if (!o.passed()) return false;
  return true;
}

CheckResult check(const Golden& golden, const std::map<std::string, Array>& actual) {
  const GoldenManifest& m = GoldenAccess::of(golden).manifest;
  std::set<std::string> outputs;
  for (const ManifestOutput& o : m.outputs) outputs.insert(o.name);
  std::string extra;
  for (const auto& [name, array] : actual)
    if (!outputs.count(name)) extra = "case " + m.name + " has no output '" + name + "'";
  return judge(golden, extra, [&](const ManifestOutput& o) -> const Tensor& {
    const auto it = actual.find(o.name);
    if (it == actual.end()) throw std::runtime_error("no actual output '" + o.name + "'");
    const Tensor& t = ArrayAccess::tensor(it->second);
    if (t.dtype() != o.dtype || t.shape() != o.shape)
      throw std::runtime_error("output '" + o.name + "' is " + std::string(dtype_name(t.dtype())) +
                               shape_string(t.shape()) + ", expected " + std::string(dtype_name(o.dtype)) +
                               shape_string(o.shape));
    return t;
  });
}

CheckResult check_file(const Golden& golden, const std::string& safetensors_path) {
  std::unique_ptr<SafetensorsReader> file;  // opened by the first output: its errors are the result's
  Tensor got;
  return judge(golden, "", [&](const ManifestOutput& o) -> const Tensor& {
    if (!file) file = std::make_unique<SafetensorsReader>(safetensors_path);
    return got = load_tensor(*file, o.name, o);
  });
}

std::ostream& operator<<(std::ostream& os, const CheckResult& r) {
  return os << (r.passed() ? "PASS " + r.name + "\n" : r.report);
}

}  // namespace kvbench
