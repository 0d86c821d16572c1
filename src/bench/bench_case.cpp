#include "bench/bench_case.hpp"

#include <algorithm>

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
  std::vector<std::vector<DispatchTime>> runs;  // the timed runs' dispatches
  rt.log_dispatches(true);
  try {
    r.time = time_repeatedly(reps, [&] {
      TensorSet io = initial;
      rt.take_dispatch_log();
      const double ms = op.run_vulkan(rt, io);
      runs.push_back(rt.take_dispatch_log());
      return ms;
    });
    rt.log_dispatches(false);
  } catch (const std::exception& e) {
    rt.log_dispatches(false);
    r.check.status = Status::fail;
    r.check.reason = std::string("error while timing: ") + e.what();
    return r;
  }
  // The last reps runs are the timed ones; each ran the same dispatches in the same order.
  runs.erase(runs.begin(), runs.end() - std::min<ptrdiff_t>(reps.reps, std::ssize(runs)));
  for (size_t k = 0; !runs.empty() && k < runs.front().size(); ++k) {
    std::vector<double> ms;
    for (const auto& run : runs)
      if (k < run.size() && run[k].shader == runs.front()[k].shader) ms.push_back(run[k].ms);
    r.kernels.push_back({runs.front()[k].shader, summarize(ms).median_ms});
  }
  if (r.timed()) r.gbps = r.bytes / (r.time.median_ms * 1e6);
  if (r.timed()) r.gflops = r.flops / (r.time.median_ms * 1e6);
  if (copy_gbps > 0) r.percent_of_copy = 100 * r.gbps / copy_gbps;
  return r;
}

}  // namespace kvbench
