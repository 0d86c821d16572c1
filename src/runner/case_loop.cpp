#include "runner/case_loop.hpp"

#include <iostream>

#include "runner/interrupt.hpp"

namespace kvbench {

void for_each_case(const std::vector<SelectedCase>& cases, bool fail_fast,
                   const std::function<bool(size_t, const SelectedCase&)>& step) {
  for (size_t i = 0; i < cases.size() && !interrupt_signal(); ++i) {
    const bool failed = step(i, cases[i]);
    if (failed && fail_fast && i + 1 < cases.size()) {
      std::cout << "--fail-fast: stopped after the first failure; " << cases.size() - i - 1
                << " cases not run\n";
      return;
    }
  }
}

}  // namespace kvbench
