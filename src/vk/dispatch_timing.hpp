#pragma once
// Device times: the ticks between two timestamps, the timed dispatches a runtime logs, and
// how `kvbench bench` repeats a batch's dispatches and what the repetitions measured.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kvbench {

class Buffer;

// The ticks between two timestamps of a queue with `valid_bits` meaningful bits (36-64):
// the difference modulo 2^valid_bits, so a counter that wrapped between them still gives
// the elapsed ticks, and bits above the valid ones never count.
uint64_t timestamp_ticks(uint64_t begin, uint64_t end, uint32_t valid_bits);

// A timed dispatch: the shader it ran and its device time.
struct DispatchTime {
  std::string shader;
  double ms = 0;
};

// How `kvbench bench` repeats a batch's dispatches (Runtime::repeat_dispatches): in one
// submission, an untimed warm-up of at least `warmup_ms` device time and `min_warmup`
// repetitions, then `reps` timed ones back to back, with the `flush` buffers filled between
// them outside the timed intervals; then, where the device has a shader clock, a probe of it.
struct RepeatPlan {
  int64_t min_warmup = 0;
  double warmup_ms = 200;
  double rep_ms_hint = 0;  // one repetition's expected device time: sizes the first warm-up
  int reps = 1;
  std::vector<Buffer*> flush;  // each within maxStorageBufferRange, together the size wanted
};

// What the repeated batches measured (summed over the batches of a run).
struct RepeatOutcome {
  int64_t warmup_count = 0;                     // untimed repetitions
  double warmup_ms = 0;                         // their device time, from a pair of timestamps around them
  std::vector<std::vector<DispatchTime>> reps;  // each timed repetition's dispatches, in order
  std::optional<double> clock_mhz;              // shader clock cycles / device time of the probe
};

}  // namespace kvbench
