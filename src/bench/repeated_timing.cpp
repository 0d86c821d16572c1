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

RepeatedTiming summarize_repeats(const RepeatOutcome& o) {
  RepeatedTiming t{.warmup_count = o.warmup_count,
                   .warmup_ms = o.warmup_ms,
                   .reps = static_cast<int>(o.reps.size()),
                   .clock_mhz = o.clock_mhz};
  std::vector<double> totals;
  for (const auto& rep : o.reps) {
    double sum = 0;
    for (const auto& d : rep) sum += d.ms;
    totals.push_back(sum);
  }
  t.time = summarize(std::move(totals));
  for (size_t k = 0; !o.reps.empty() && k < o.reps.front().size(); ++k) {
    std::vector<double> ms;
    for (const auto& rep : o.reps)
      if (k < rep.size() && rep[k].shader == o.reps.front()[k].shader) ms.push_back(rep[k].ms);
    t.kernels.push_back({o.reps.front()[k].shader, summarize(ms).median_ms});
  }
  return t;
}

RepeatedTiming time_repeated(Runtime& rt, const Repetitions& r, double rep_ms_hint,
                             const std::function<void()>& run) {
  rt.take_repeat_outcome();
  rt.repeat_dispatches(RepeatPlan{.min_warmup = r.warmup,
                                  .warmup_ms = r.warmup_ms,
                                  .rep_ms_hint = rep_ms_hint,
                                  .reps = r.reps,
                                  .flush = r.flush});
  try {
    run();
  } catch (...) {
    rt.repeat_dispatches(std::nullopt);
    rt.take_repeat_outcome();
    throw;
  }
  rt.repeat_dispatches(std::nullopt);
  return summarize_repeats(rt.take_repeat_outcome());
}

}  // namespace kvbench
