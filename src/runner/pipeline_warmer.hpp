#pragma once
// `kvbench run` on a CPU device: the pipelines of the selected cases compiled ahead, on
// threads beside the run. Lavapipe compiles a pipeline with LLVM at its first dispatch, on
// its device's one queue thread, and a cold run spends most of its time there (seconds per
// attention pipeline). Each warmer thread opens its own device (its own queue thread), walks
// the cases from the last one back, and runs each case that needs a pipeline it has not
// compiled yet with empty dispatches (Runtime::compile_only); Mesa's on-disk shader cache
// then hands the compiled code to the run's own device. A case is never computed here, and
// no result depends on it: without the cache the run compiles as before.
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

#include "runner/case_selection.hpp"

namespace kvbench {

class PipelineWarmer {
 public:
  // Starts `threads` threads on device `device_index` for the cases of `sel`, which must
  // outlive the warmer. The run reports each case it starts with reached().
  PipelineWarmer(const Selection& sel, int device_index, unsigned threads);
  ~PipelineWarmer();  // stops the threads after their current case
  PipelineWarmer(const PipelineWarmer&) = delete;
  PipelineWarmer& operator=(const PipelineWarmer&) = delete;
  // The run has started case `index`: its pipelines are no use to compile ahead any more.
  void reached(size_t index) { reached_.store(index); }

 private:
  void work(unsigned thread, unsigned threads);
  const Selection& sel_;
  int device_index_;
  std::atomic<size_t> reached_{0};
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// The default thread count: on a CPU device, its other hardware threads (at most 3); none
// on a GPU, whose drivers compile at pipeline creation from their own caches.
unsigned default_warmer_threads(bool cpu_device);

}  // namespace kvbench
