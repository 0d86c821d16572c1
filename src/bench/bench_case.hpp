#pragma once
// One case of `kvbench bench`: checked once against the golden (so the table says whether
// the kernel being timed is correct), then its Vulkan implementation run once with its
// dispatches warmed up and repeated (bench/repeated_timing.hpp).
#include <vector>

#include "bench/repeated_timing.hpp"
#include "runner/case_result.hpp"
#include "vk/runtime.hpp"

namespace kvbench {

struct BenchResult {
  CaseResult check;            // the comparison: status, skip reason, worst element
  RepeatedTiming timing;       // the timed repetitions; zeros when the case was not timed
  double bytes = 0;            // op.traffic_bytes: what the operator must move at least
  double gbps = 0;             // bytes / median time, in 1e9 bytes per second
  double percent_of_copy = 0;  // gbps as a share of the device's copy bandwidth
  double flops = 0;            // op.flops(): 0 where the operator does not count them
  double gflops = 0;           // flops / median time, in 1e9 per second
  bool timed() const { return timing.time.median_ms > 0; }
};

// A skipped case, or one whose check threw, is not timed. A failing case is timed all the
// same: its speed is still worth seeing, and the table marks it FAIL.
BenchResult bench_case(const CaseDef& def, const OpCase& op, Runtime& rt, const Repetitions& reps,
                       double copy_gbps);

}  // namespace kvbench
