#include "core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace kvbench {

void parallel_for(int64_t n, unsigned threads, const std::function<void(int64_t)>& fn) {
  const auto workers = static_cast<unsigned>(std::clamp<int64_t>(n, 1, std::max(1u, threads)));
  if (workers == 1) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_lock;
  auto work = [&] {
    for (int64_t i; !failed && (i = next++) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard lock(error_lock);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  {
    std::vector<std::jthread> pool;
    for (unsigned t = 1; t < workers; ++t) pool.emplace_back(work);
    work();
  }  // joined
  if (error) std::rethrow_exception(error);
}

}  // namespace kvbench
