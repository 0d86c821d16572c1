#include "core/run_options.hpp"

#include <unistd.h>

#include <algorithm>
#include <thread>

namespace kvbench {

uint64_t default_memory_budget() {
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(size) / 2
                               : uint64_t{8} << 30;
}

unsigned hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

}  // namespace kvbench
