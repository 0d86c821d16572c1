#include "runner/run_case.hpp"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "runner/golden_case.hpp"
#include "golden/safetensors.hpp"
#include "vk/runtime.hpp"

namespace kvbench {

namespace {

void save_actual(const CaseDef& def, const std::vector<Expected>& expected, const TensorSet& io,
                 const std::string& dir) {
  SafetensorsFile file;
  for (const auto& e : expected) file.tensors[e.tensor] = to_stored(io.at(e.tensor));
  file.metadata["kvbench_case"] = def.name;
  write_safetensors((std::filesystem::path(dir) / (case_file_stem(def.name) + ".safetensors")).string(),
                    file);
}

}  // namespace

CaseResult run_case(const CaseDef& def, const OpCase& op, Runtime& rt, const std::string& save_actual_dir) {
  const auto start = std::chrono::steady_clock::now();
  CaseResult r{.name = def.name, .file = def.file, .op = def.op, .resolved = op.resolved()};
  // Decided from the shapes alone, before any tensor or reference is computed.
  if (auto reason = op.skip_reason(rt.info())) {
    r.status = Status::skip;
    r.reason = *reason;
    return r;
  }
  const TensorSet initial = op.make_tensors();
  const std::vector<Expected> expected = op.golden(initial);
  r.figures = op.figures();
  for (const auto& e : expected) r.figures.insert(r.figures.end(), e.figures.begin(), e.figures.end());
  TensorSet io = initial;
  for (const auto& e : expected) poison_output(e, io.at(e.tensor));
  std::optional<std::string> skipped;
  try {
    r.device_ms = op.run_vulkan(rt, io);
  } catch (const SkipCase& skip) {
    skipped = skip.what();
  }
  // Under KVBENCH_VALIDATION=1 a validation error or warning fails the case: the kernel
  // plan is invalid Vulkan even where lavapipe computes the right numbers.
  const ValidationMessages v = rt.take_validation_messages();
  if (skipped && v.count() == 0) {
    r.status = Status::skip;
    r.reason = *skipped;
    return r;
  }
  std::string save_error;
  if (!skipped && !save_actual_dir.empty()) {
    try {
      save_actual(def, expected, io, save_actual_dir);
    } catch (const std::exception& e) {
      save_error = std::string("--save-actual: ") + e.what();
    }
  }
  if (!skipped)
    for (const auto& e : expected) {
      const Tensor& actual = io.at(e.tensor);
      r.outputs.push_back({compare_output(e, actual, initial.at(e.tensor)), e.tolerance, actual.shape()});
    }
  r.status = r.violations() == 0 && save_error.empty() ? Status::pass : Status::fail;
  r.reason = save_error;
  if (v.count() > 0) {
    r.status = Status::fail;
    r.reason = "Vulkan validation: " + std::to_string(v.errors) + " errors, " + std::to_string(v.warnings) +
               " warnings; first: " + v.first;
  }
  r.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace kvbench
