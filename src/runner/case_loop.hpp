#pragma once
// "For each case, run and report", written once for `run` (on Vulkan or a backend) and
// `bench`: the selected cases in order, each handed to a step that runs and reports it.
#include <cstddef>
#include <functional>
#include <vector>

#include "runner/case_selection.hpp"

namespace kvbench {

// Calls step(i, cases[i]) for each case in order; the step runs and reports the case and
// returns whether it failed. Stops at SIGINT/SIGTERM (once a handler is installed:
// runner/interrupt.hpp) and, with `fail_fast`, after the first failure, saying how many
// cases were not run.
void for_each_case(const std::vector<SelectedCase>& cases, bool fail_fast,
                   const std::function<bool(size_t, const SelectedCase&)>& step);

}  // namespace kvbench
