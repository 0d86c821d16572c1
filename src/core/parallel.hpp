#pragma once
// Threads inside one case's reference computation. A reference that fans out with
// parallel_for writes each output from exactly one task, in a fixed order within the
// task, so its bytes do not depend on the thread count (specs/golden-format.md,
// "Determinism").
#include <cstdint>
#include <functional>

namespace kvbench {

// Calls fn(i) once for every i in [0, n) on up to `threads` threads, the caller's
// included (it returns when all are done). Indices are taken in ascending order from a
// shared counter; fn must write only what index i owns. The first exception thrown by
// any call is rethrown here after the others finish (no further indices are started).
void parallel_for(int64_t n, unsigned threads, const std::function<void(int64_t)>& fn);

}  // namespace kvbench
