#include "bench/repeated_timing.hpp"

#include <algorithm>

namespace kvbench {

TimingStats summarize(std::vector<double> samples_ms) {
  if (samples_ms.empty()) return {};
  std::sort(samples_ms.begin(), samples_ms.end());
  const size_t n = samples_ms.size();
  const double median = n % 2 ? samples_ms[n / 2] : (samples_ms[n / 2 - 1] + samples_ms[n / 2]) / 2;
  return {median, samples_ms.front(), samples_ms.back()};
}

TimingStats time_repeatedly(const Repetitions& r, const std::function<double()>& run) {
  for (int i = 0; i < r.warmup; ++i) run();
  std::vector<double> samples;
  for (int i = 0; i < r.reps; ++i) samples.push_back(run());
  return summarize(std::move(samples));
}

}  // namespace kvbench
