#pragma once
// What one command's flags decide for every case it loads, computes or writes: held by
// the command and passed down (to the loader, each case's Args, the references, the golden
// writer), never a process-wide setting.
#include <cstdint>

namespace kvbench {

// Half the machine's physical memory (8 GiB when it cannot be read).
uint64_t default_memory_budget();
// std::thread::hardware_concurrency(), at least 1.
unsigned hardware_threads();

struct RunOptions {
  // Host memory one case may take (--memory-budget), checked from the shapes before
  // anything is allocated.
  uint64_t memory_budget = default_memory_budget();
  // The most cases one file's sweep may expand to (--max-cases).
  uint64_t max_cases_per_file = 10000;
  // Whether a file input may lie outside the case file's folder tree (--allow-outside-paths).
  bool allow_outside_paths = false;
  // Threads of one case's input filling and reference (--threads): the bytes do not depend
  // on it (core/parallel.hpp).
  unsigned reference_threads = hardware_threads();
};

}  // namespace kvbench
