#pragma once
// `kvbench list --pipelines`: per case the pipelines (shader and specialization constants,
// as the runtime keys them) that running it on the device would create, or why it would
// skip, or the error it meets. Nothing is computed: the runtime records no dispatch
// (Runtime::plan_only).
#include <cstddef>
#include <ostream>

#include "runner/case_selection.hpp"

namespace kvbench {

class Runtime;

// One line per case of `sel` on `out`: "NAME  pipelines: KEY ...", "NAME  skipped: WHY" or
// "NAME  error: WHAT" (the other cases still listed). Returns the number of errors.
size_t list_pipelines(Runtime& rt, const Selection& sel, std::ostream& out);

}  // namespace kvbench
