#pragma once
// What the reference says one output tensor must hold.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "check/tolerance.hpp"
#include "core/tensor.hpp"

namespace kvbench {

struct Expected {
  std::string tensor;
  // The golden value of each element, as stored in the output's dtype (exactly
  // representable in it). `exact` is the same quantity before the final conversion to
  // that dtype: every intermediate rounding the definition makes is included, only the
  // last rounding (to the float dtype, or to an integer code and its clamp) is not
  // (specs/golden-format.md "expected_f64").
  std::vector<double> value;
  std::vector<double> exact;
  // Empty when no element has one; else NaN where there is none, otherwise a second value
  // accepted for that element because the golden's pre-rounding value lies within the
  // spec's epsilon of a rounding boundary (an int code one step away, or the dequantized
  // value of that code). Counted apart.
  std::vector<double> alternate;
  // In-place tensors only: 1 where the operator writes. Elsewhere the bits must equal the
  // tensor's bits before the dispatch. Empty for plain outputs (all elements written).
  std::vector<uint8_t> touched;
  Tolerance tolerance;

  static constexpr double none = std::numeric_limits<double>::quiet_NaN();
  bool is_touched(size_t i) const { return touched.empty() || touched[i]; }
  bool has_alternate(size_t i) const { return !alternate.empty() && !std::isnan(alternate[i]); }
  // Records a (non-NaN) alternate of element i, allocating the array on first use.
  void set_alternate(size_t i, double v) {
    if (std::isnan(v)) return;
    if (alternate.empty()) alternate.assign(value.size(), none);
    alternate[i] = v;
  }
};

// The goldens of a reference, moved into a vector (a braced list would copy them whole:
// the elements of an initializer_list are const).
template <typename... E>
std::vector<Expected> expected_list(E&&... e) {
  std::vector<Expected> v;
  v.reserve(sizeof...(e));
  (v.push_back(std::move(e)), ...);
  return v;
}

// The starting point of an in-place tensor's golden: its initial contents, nothing
// touched yet. The reference then overwrites (and marks) what the operator writes.
Expected expect_unchanged(const Tensor& initial);

}  // namespace kvbench
