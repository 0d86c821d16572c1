#pragma once
// Repeated device timing for `kvbench bench`: a case's dispatches repeated back to back in
// one submission (Runtime::repeat_dispatches), after an untimed warm-up measured in device
// time that raises the GPU's clock, summarized by the median, which one preempted
// repetition does not move.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "vk/runtime.hpp"

namespace kvbench {

struct Repetitions {
  int64_t warmup = 2;          // --warmup: warm-up repetitions at least
  double warmup_ms = 200;      // --warmup-ms: and at least this much device time
  int reps = 10;               // --reps: timed repetitions
  std::vector<Buffer*> flush;  // --flush-cache: filled between timed repetitions (untimed)
  size_t flush_bytes() const {
    size_t n = 0;
    for (const Buffer* b : flush) n += b->size();
    return n;
  }
};

struct TimingStats {
  double median_ms = 0, min_ms = 0, max_ms = 0;
};

// What one repeated run measured.
struct RepeatedTiming {
  TimingStats time;                   // per repetition, the sum of its dispatches' device times
  std::vector<DispatchTime> kernels;  // each dispatch of a repetition: its median over them
  int64_t warmup_count = 0;
  double warmup_ms = 0;
  int reps = 0;                     // timed repetitions measured
  std::optional<double> clock_mhz;  // the shader clock after them; none without VK_KHR_shader_clock
};

// Median (mean of the middle two for an even count), min and max; zeros for no samples.
TimingStats summarize(std::vector<double> samples_ms);

// The figures of an outcome: reps is its repetition count, kernels match by position and shader.
RepeatedTiming summarize_repeats(const RepeatOutcome& o);

// Calls `run` (which records and submits its batches) once with the runtime repeating
// their dispatches as `r` says; `rep_ms_hint` (a run's device time, or 0) sizes the warm-up.
RepeatedTiming time_repeated(Runtime& rt, const Repetitions& r, double rep_ms_hint,
                             const std::function<void()>& run);

}  // namespace kvbench
