#pragma once
#include <string>

namespace kvbench {

// An element passes when |actual - golden| <= atol + rtol * |golden|. atol = rtol = 0 means
// exact. Every output also accepts, element by element, the golden's "alternate" value
// where the golden lies at a rounding boundary (see Expected).
struct Tolerance {
  double atol = 0;
  double rtol = 0;
  std::string reason;  // why a case file loosened or tightened the spec's default
  bool exact() const { return atol == 0 && rtol == 0; }
};

}  // namespace kvbench
