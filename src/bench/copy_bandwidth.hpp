#pragma once
// The yardstick of `kvbench bench`: how fast the device copies one buffer into another
// with the plainest kernel it runs well (uvec4 loads and stores). An operator's effective
// bandwidth is reported as a share of it.
#include <cstddef>

#include "bench/repeated_timing.hpp"

namespace kvbench {

class Runtime;

struct CopyBandwidth {
  size_t bytes = 0;       // size of the source, and of the destination
  RepeatedTiming timing;  // warmed up and repeated as the cases are
  double gbps = 0;        // (bytes read + bytes written) / median time, in 1e9 bytes per second
};

// Copies 64 MiB (less when maxStorageBufferRange is smaller) with shaders/copy_bandwidth.comp.
// Throws std::runtime_error when the device has no timestamps or the copy came out wrong.
CopyBandwidth measure_copy_bandwidth(Runtime& rt, const Repetitions& reps);

}  // namespace kvbench
