#pragma once
// `kvbench shrink`: from a failing case, the smallest case that still fails the same way
// (the same output tensor, the same kind of failure), found by reducing the sizes the
// operator declares (Signature::sizes: batch, lengths, head counts, head sizes, page size)
// one at a time while its constraint checker accepts the case (specs/case-format.md
// "Shrinking a failure").
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "cases/case_def.hpp"
#include "runner/case_result.hpp"

namespace kvbench {

// How a case fails: nothing, an output out of tolerance with finite values only, an output
// with NaN/Inf where the golden has none (or the reverse), or no outputs at all (an error,
// a crash, a backend that fails or hangs).
struct Failure {
  enum Kind { none, mismatch, nan, crash } kind = none;
  std::string tensor;  // the first failing output ("" for none and crash)
  std::string text() const;
  // Whether `r` fails this way: `tensor` fails with this kind (other outputs may fail too).
  bool matches(const CaseResult& r) const;
};
Failure failure_of(const CaseResult& r);

// Runs one case (on Vulkan or on a backend); may throw (a crash).
using CaseRunner = std::function<CaseResult(const CaseDef&, const OpCase&)>;

struct ShrinkOutcome {
  CaseDef smallest;  // the failing case itself when nothing could be reduced
  int runs = 0;      // candidates run
  bool out_of_runs = false;
};

// Reduces `failing` (which fails as `target`) key by key: for each declared size written in
// the case, the least value in [max(1, its minimum), current] that still fails as `target`
// (bisection; a value the constraints reject counts as not failing), arrays of the `inputs`
// section first shortened (with every other inputs array of the same length) then reduced
// element by element; rounds repeat until a round changes nothing. At most `max_runs`
// candidates run, each instantiated under `options`. `log` gets one line per candidate tried.
ShrinkOutcome shrink_case(const CaseDef& failing, const RunOptions& options, const Failure& target,
                          const CaseRunner& run, int max_runs,
                          const std::function<void(const std::string&)>& log);

// The case file of `def` alone: its document with the sweep values in place, no sweep, no
// "slow", renamed `name`, described by `description`, and every input file's path written
// relative to `folder` (where the file will be). Sets `outside` when such a path leaves
// `folder`'s tree (the file then needs --allow-outside-paths).
nlohmann::json standalone_case_document(const CaseDef& def, const std::string& name,
                                        const std::string& description, const std::string& folder,
                                        bool& outside);

}  // namespace kvbench
