#include "runner/pipeline_warmer.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "core/dtype.hpp"
#include "runner/interrupt.hpp"
#include "vk/runtime.hpp"

namespace kvbench {

namespace {

// Cases whose tensors are larger are left to the run: the warmer must not double the
// memory a big case takes.
constexpr double kMaxWarmBytes = 256.0 * (1 << 20);

double tensor_bytes(const OpCase& op) {
  double bytes = 0;
  for (const auto& t : op.tensor_specs())
    bytes += static_cast<double>(dtype_storage_bytes(t.dtype, shape_numel(t.shape)));
  return bytes;
}

}  // namespace

unsigned default_warmer_threads(bool cpu_device) {
  if (!cpu_device) return 0;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 1 ? std::min(hw - 1, 3u) : 0;
}

PipelineWarmer::PipelineWarmer(const Selection& sel, int device_index, unsigned threads)
    : sel_(sel), device_index_(device_index) {
  for (unsigned t = 0; t < threads; ++t) threads_.emplace_back([this, t, threads] { work(t, threads); });
}

PipelineWarmer::~PipelineWarmer() {
  stop_.store(true);
  for (auto& t : threads_) t.join();
}

void PipelineWarmer::work(unsigned thread, unsigned threads) {
  try {
    // No validation layer: its empty dispatches are no plan of a kernel's (best practices
    // warns of each), and a validated run checks its own device.
    RuntimeOptions options = RuntimeOptions::from_env();
    options.validation = false;
    Runtime rt(device_index_, options);
    std::set<std::string> compiled;
    // Thread t takes every threads-th case from the last one back.
    for (size_t i = sel_.cases.size() - 1 - thread; i < sel_.cases.size(); i -= threads) {
      if (stop_.load() || interrupt_signal() || i <= reached_.load()) return;
      const OpCase& op = *sel_.cases[i].op;
      if (op.skip_reason(rt.info()) || tensor_bytes(op) > kMaxWarmBytes) continue;
      try {
        TensorSet io = op.make_tensors();
        rt.plan_only(true);
        op.run_vulkan(rt, io);
        rt.plan_only(false);
        const auto keys = rt.take_pipeline_log();
        if (std::all_of(keys.begin(), keys.end(), [&](const std::string& k) { return compiled.count(k); }))
          continue;
        rt.compile_only(true);
        op.run_vulkan(rt, io);
        rt.compile_only(false);
        compiled.insert(keys.begin(), keys.end());
      } catch (const std::exception&) {
        // The run meets the same case and reports whatever this was.
        rt.plan_only(false);
        rt.compile_only(false);
        rt.take_pipeline_log();
      }
    }
  } catch (const std::exception&) {
    // No device for the warmer: the run compiles its pipelines itself.
  }
}

}  // namespace kvbench
