#include "bench/bench_case.hpp"

#include "runner/run_case.hpp"

namespace kvbench {

BenchResult bench_case(const CaseDef& def, const OpCase& op, Runtime& rt, const Repetitions& reps,
                       double copy_gbps) {
  BenchResult r;
  try {
    r.check = run_case(def, op, rt);
  } catch (const std::exception& e) {
    r.check = CaseResult{.name = def.name, .file = def.file, .op = def.op, .status = Status::fail,
                         .reason = std::string("error: ") + e.what(), .resolved = op.resolved()};
    return r;
  }
  if (r.check.status == Status::skip) return r;

  const TensorSet initial = op.make_tensors();
  r.bytes = op.traffic_bytes(initial);
  r.flops = op.flops();
  // Every run starts from the initial tensors: an in-place cache must not carry one run's
  // writes into the next.
  try {
    r.time = time_repeatedly(reps, [&] {
      TensorSet io = initial;
      return op.run_vulkan(rt, io);
    });
  } catch (const std::exception& e) {
    r.check.status = Status::fail;
    r.check.reason = std::string("error while timing: ") + e.what();
    return r;
  }
  if (r.timed()) r.gbps = r.bytes / (r.time.median_ms * 1e6);
  if (r.timed()) r.gflops = r.flops / (r.time.median_ms * 1e6);
  if (copy_gbps > 0) r.percent_of_copy = 100 * r.gbps / copy_gbps;
  return r;
}

}  // namespace kvbench
