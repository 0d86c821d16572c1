#pragma once
// Repeated device timing for `kvbench bench`: warm-up runs (pipelines JIT-compiled, pages
// touched, caches filled) that are not counted, then timed runs summarized by their median,
// which one preempted run does not move.
#include <functional>
#include <vector>

namespace kvbench {

struct Repetitions {
  int warmup = 2;
  int reps = 10;
};

struct TimingStats {
  double median_ms = 0, min_ms = 0, max_ms = 0;
};

// Median (mean of the middle two for an even count), min and max; zeros for no samples.
TimingStats summarize(std::vector<double> samples_ms);

// Calls `run` (which returns device ms) warmup + reps times and summarizes the last reps.
TimingStats time_repeatedly(const Repetitions& r, const std::function<double()>& run);

}  // namespace kvbench
