#pragma once
// The per-element bound of attention (specs/comparison.md "Bounds from the definition"):
// how far the output of any implementation the operator's definition permits may lie from
// the golden, by forward error analysis of softmax(s) @ V. attend() gathers a few figures
// per row and per call as it computes the golden; the bound follows from them.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/dtype.hpp"

namespace kvbench {

// How far a permitted implementation's intermediate values may lie from the golden's, set
// by the operator from its definition and the implementations it permits (its signature's
// variants). Relative differences per element, and absolute ones where a rounding may
// underflow into subnormals (f16's spacing 2^-24 there: half of it).
struct PermittedDeltas {
  double k = 0;      // |k~' - k~| <= k * |k~| per element of K: both dequantizations' roundings
  double k_abs = 0;  // and an absolute |k~' - k~| per element (a dequantization in f16 of d * q + m)
  double v = 0;      // the same for V
  double v_abs = 0;  // and an absolute |v~' - v~| per element
  double p = 0;      // |p' - p| <= p * p + p_abs per key: the golden's P rounding and a permitted one's
  double p_abs = 0;
  double s = 0;  // the final score's own roundings beyond f32's (scores kept in f16): s * |s|
  // The unit roundoff q . k is accumulated in (f32 unless an operator permits f16 scores).
  double dot = 0x1p-24;
  // A running P @ V accumulation rounded to a narrower dtype than f32 (Ascend's fp16
  // prefill): its unit roundoff and the keys of a block between its roundings (0: f32 only).
  double acc = 0;
  int64_t acc_block = 0;
};

// The unit roundoff of a float dtype: 2^-24 for f32, 2^-11 f16, 2^-8 bf16 (0 for others).
double unit_roundoff(DType t);
// Half the spacing of the dtype's subnormals (where a rounding to it is absolute, not
// relative): 2^-25 for f16, 0 for bf16 and f32 at the magnitudes attention meets.
double subnormal_half_spacing(DType t);

// What attend() measures of one query row for its bound.
struct RowFigures {
  double q_norm = 0;     // ||q||_2
  double q_delta = 0;    // QueryRow::q_delta
  double s_delta = 0;    // what AttentionBlock::bias returned for the row
  double score_max = 0;  // max |s_j| over the row's finite final scores
  double spread = 0;  // sum_j p_j |s_j - max s|: the mean distance below the max (exp's error grows with it)
  int64_t keys = 0;   // keys the row sees
};

// What attend() measures of one output channel d of a row.
struct ChannelFigures {
  double v_max = 0;     // max_j |v_jd| over the call's keys
  double weighted = 0;  // >= sum_j p_j |v_jd| over the row's keys (the golden's weights)
  double out = 0;       // |o_d|, the golden's output before its rounding
};

// The bound of element d of row r's output before the output's own rounding, given the
// call's largest ||k_j||_2 (k_norm_max), the channel's figures, the scale and the row's
// figures. Every term's source is in specs/comparison.md.
double attention_element_bound(const PermittedDeltas& delta, double scale_factor, int64_t dk,
                               double k_norm_max, const ChannelFigures& channel, const RowFigures& row);
// The same as coefficients of one row: bound = spread * (w + |o|) + weighted * w + v_max *
// max|v| + fixed, every channel of the row sharing them.
struct BoundTerms {
  double spread = 0, weighted = 0, v_max = 0, fixed = 0;
  double at(const ChannelFigures& c) const {
    return spread * (c.weighted + c.out) + weighted * c.weighted + v_max * c.v_max + fixed;
  }
};
BoundTerms attention_bound_terms(const PermittedDeltas& delta, double scale_factor, int64_t dk,
                                 double k_norm_max, const RowFigures& row);
// The bound of the row's log-sum-exp (softmaxLse) before its rounding.
double attention_lse_bound(const PermittedDeltas& delta, double scale_factor, int64_t dk, double k_norm_max,
                           double lse, const RowFigures& row);

// Inline and from the bits, not libm's nextafter, ilogb and ldexp: a golden calls them for
// every output element (equal to those for every input: tests/test_attention_bound.cpp).

// The nearest f32 at or above x (how bounds are stored: never below the derivation's).
inline float f32_at_or_above(double x) {
  const float f = static_cast<float>(x);
  if (!(static_cast<double>(f) < x)) return f;
  const uint32_t u = std::bit_cast<uint32_t>(f);
  return std::bit_cast<float>(u >> 31 ? u - 1 : u + 1);  // the next f32 up (a negative: toward 0)
}

// The unit in the last place of a float dtype at magnitude x >= 0 (its subnormal spacing
// below the smallest normal; that spacing for 0, a negative or NaN; +inf at +inf).
inline double ulp_at(DType t, double x) {
  int mantissa = 23, min_exponent = -126;
  if (t == DType::f16) mantissa = 10, min_exponent = -14;
  if (t == DType::bf16) mantissa = 7;
  const int field = static_cast<int>(std::bit_cast<uint64_t>(x) >> 52 & 0x7FF);
  if (x > 0 && field == 0x7FF) return std::numeric_limits<double>::infinity();
  const int e = x > 0 ? std::max(field - 1023, min_exponent) : min_exponent;  // a subnormal double: min
  return std::bit_cast<double>(static_cast<uint64_t>(e - mantissa + 1023) << 52);
}

// An output element's bound: `before` (the above) plus the output's rounding of the golden
// and of the permitted value: one unit in the last place of `dtype` at |golden| + before.
inline double rounded_bound(DType dtype, double golden, double before) {
  if (!std::isfinite(golden)) return before;
  return before + ulp_at(dtype, std::fabs(golden) + before);
}

}  // namespace kvbench
