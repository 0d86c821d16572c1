#pragma once
// Element-by-element comparison of a backend's output with the golden
// (specs/comparison.md), and the poisoning that makes unwritten elements fail.
#include <cstdint>
#include <string>

#include "check/expected.hpp"
#include "core/tensor.hpp"

namespace kvbench {

struct Metrics {
  std::string tensor;
  size_t elements = 0;    // elements compared
  size_t violations = 0;  // elements outside tolerance (NaN/Inf mismatches and scribbles included)
  size_t nonfinite_mismatches = 0;
  size_t untouched_changed = 0;  // in-place elements the operator must not touch whose bits changed
  size_t unwritten = 0;          // elements still holding poison_output's signalling NaN (never written)
  size_t boundary = 0;  // elements accepted only through an alternate: a rounding boundary's other value, or
                        // a permitted NaN
  double max_abs = 0;   // over finite pairs
  double max_rel = 0;   // |a-g| / |g| over finite pairs with g != 0 (large where g is near 0)
  double scale = 0;     // max |g| over the finite written elements: the output's magnitude
  double rel_l2 = 0;    // ||a-g||_2 / ||g||_2 over finite pairs (0 when the golden is all zero and a == g)
  int64_t worst_index = -1;  // flat index of the worst violation (or of the largest error when none)
  double worst_actual = 0, worst_golden = 0;
  double worst_allowed = 0;        // the worst element's allowance: its bound, or atol + rtol |g|
  bool per_element_bound = false;  // the golden's per-element bound decided (not atol/rtol)
  bool worst_untouched = false;    // the worst element lies outside the written region
  // The largest |a - g| / (atol + rtol |g|) over the written elements (an element's
  // alternate, where it has one, taken when it is nearer); +inf for a NaN/Inf mismatch, a
  // changed untouched element, or any difference under an exact tolerance. A violation is
  // exactly an element above 1.
  double max_over_tolerance = 0;
  bool passed() const { return violations == 0; }
  // max_abs relative to the output's scale: unlike max_rel, small for a small error on a
  // golden near zero. 0 when both are 0; +inf for an error on an all-zero golden.
  double err_over_scale() const;
};

// `before` is the tensor as it was before the dispatch (used for in-place tensors).
Metrics compare_output(const Expected& expected, const Tensor& actual, const Tensor& before);

// Overwrites every element the operator must write with a value that cannot pass: for
// floats a NaN (a finite value where the golden itself is NaN), and for integers the golden
// with its top bit flipped (never the golden nor its +-1 alternate). Where the dtype has NaN
// payloads (f16, bf16, f32) the NaN is unwritten_nan_bits: a signalling NaN with a payload
// that no arithmetic yields (IEEE 754 6.2: operations deliver quiet NaNs), so an element left
// unwritten fails even where a permitted implementation may give NaN (nan_permitted).
void poison_output(const Expected& expected, Tensor& tensor);

// The poison's bits in `dtype`, or 0 for a dtype without NaN payloads (FP8: one NaN).
uint64_t unwritten_nan_bits(DType dtype);

// The multi-index of a flat index, as "[i,j,k]".
std::string index_string(const Shape& shape, int64_t flat);

}  // namespace kvbench
