#include "bench/bench_case.hpp"

#include "runner/run_case.hpp"

namespace kvbench {

BenchResult bench_case(const CaseDef& def, const OpCase& op, Runtime& rt, const Repetitions& reps,
                       double copy_gbps) {
  BenchResult r;
  try {
    r.check = run_case(def, op, rt);
  } catch (const std::exception& e) {
    r.check = error_result(def, op, e);
    return r;
  }
  if (r.check.status == Status::skip) return r;

  const TensorSet initial = op.make_tensors();
  r.bytes = op.traffic_bytes(initial);
  r.flops = op.flops();
  // The timed run starts from the initial tensors; its repetitions run the same dispatches
  // on the same buffers, which every kernel here writes from its inputs alone.
  try {
    TensorSet io = initial;
    r.timing = time_repeated(rt, reps, r.check.device_ms, [&] { op.run_vulkan(rt, io); });
    // Under KVBENCH_VALIDATION=1 the repeated submission is checked as run's is.
    if (const ValidationMessages v = rt.take_validation_messages(); v.count() > 0)
      throw std::runtime_error("validation: " + std::to_string(v.count()) + " messages, first: " + v.first);
  } catch (const std::exception& e) {
    r.check.status = Status::fail;
    r.check.reason = std::string("error while timing: ") + e.what();
    return r;
  }
  if (r.timed()) r.gbps = r.bytes / (r.timing.time.median_ms * 1e6);
  if (r.timed()) r.gflops = r.flops / (r.timing.time.median_ms * 1e6);
  if (copy_gbps > 0) r.percent_of_copy = 100 * r.gbps / copy_gbps;
  return r;
}

}  // namespace kvbench
