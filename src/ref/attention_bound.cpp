#include "ref/attention_bound.hpp"

#include <cmath>

namespace kvbench {

namespace {

constexpr double kU32 =
    0x1p-24;  // f32's unit roundoff: every permitted implementation computes in f32 at least

// The score perturbation every key of the row may see (specs/comparison.md, term 1): K~'s
// difference (delta.k) and f32's dot product of dk terms in any order, its scaling and the
// bias added in f32 (each a rounding of the score), and a bias in another dtype.
double score_delta(const PermittedDeltas& delta, double scale_factor, int64_t dk, double k_norm_max,
                   const RowFigures& row) {
  const double dot = scale_factor * row.q_norm * k_norm_max;  // >= |scale| sum_d |q_d k_jd| (Cauchy-Schwarz)
  // A query off by q_delta (2-norm) moves q . k by at most q_delta ||k~_j||; K~ off by k_abs
  // per element moves it by at most k_abs ||q||_1 <= k_abs sqrt(dk) ||q||.
  const double moved = scale_factor * (row.q_delta * k_norm_max +
                                       delta.k_abs * std::sqrt(static_cast<double>(dk)) * row.q_norm);
  return dot * (delta.k + static_cast<double>(dk + 2) * std::max(delta.dot, kU32)) + moved * (1 + 0x1p-20) +
         row.s_delta + (3 * kU32 + delta.s) * row.score_max;
}

// exp's relative error on a key at distance x below the max: Vulkan's exp is within
// 3 + 2|x| ulp (2u each), exp2 with a log2(e) prescale adds |x| u, and s - max rounds
// (|x| u): (6 + 6|x|) u, averaged over the row's weights.
double exp_delta(const RowFigures& row) { return kU32 * (6 + 6 * row.spread); }

}  // namespace

double unit_roundoff(DType t) {
  switch (t) {
    case DType::f16: return 0x1p-11;
    case DType::bf16: return 0x1p-8;
    case DType::f32: return kU32;
    default: return 0;
  }
}

double subnormal_half_spacing(DType t) { return t == DType::f16 ? 0x1p-25 : 0; }

BoundTerms attention_bound_terms(const PermittedDeltas& delta, double scale_factor, int64_t dk,
                                 double k_norm_max, const RowFigures& row) {
  const double n = static_cast<double>(row.keys);
  const double eps = score_delta(delta, scale_factor, dk, k_norm_max, row);
  // With w = sum_j p_j |v_jd| and |o_d|, sum_j p_j |v_jd - o_d| <= w + |o_d|:
  // 1. Scores off by at most eps move each weight by a factor within e^(+-2 eps):
  //    |sum_j (p'_j - p_j)(v_jd - o_d)| <= (e^(2 eps) - 1) sum_j p_j |v_jd - o_d|.
  // 2. exp's own error, a relative error of each weight: the same sum.
  const double spread = std::expm1(2 * eps) + exp_delta(row);
  // 3. P's roundings: sum_j (delta.p p_j + p_abs) |v_jd| <= delta.p w + n p_abs max|v|.
  // 4. V's: sum_j p_j (delta.v |v_jd| + v_abs).
  // 5. f32 sums in any order (P @ V and the softmax's denominator, n terms each: (n - 1) u of
  //    the sum of magnitudes), the division, a split-K merge's rescaling; a running sum
  //    rounded to a narrower dtype after each block of keys: the block's f32 product, the
  //    rescale and the addition each round (3 a block), and the final division.
  double weighted = delta.p + delta.v + (2 * n + 8) * kU32;
  if (delta.acc > 0 && delta.acc_block > 0)
    weighted += (3 * std::ceil(n / static_cast<double>(delta.acc_block)) + 4) * delta.acc;
  // Products of two of these terms: below 2^-6 of their sum at every precision kvbench has.
  constexpr double second_order = 1 + 0x1p-6;
  return {.spread = spread * second_order,
          .weighted = weighted * second_order,
          .v_max = n * delta.p_abs * second_order,
          .fixed = delta.v_abs * second_order};
}

double attention_element_bound(const PermittedDeltas& delta, double scale_factor, int64_t dk,
                               double k_norm_max, const ChannelFigures& channel, const RowFigures& row) {
  return attention_bound_terms(delta, scale_factor, dk, k_norm_max, row).at(channel);
}

double attention_lse_bound(const PermittedDeltas& delta, double scale_factor, int64_t dk, double k_norm_max,
                           double lse, const RowFigures& row) {
  const double n = static_cast<double>(row.keys);
  // log(sum_j e^(s_j)) moves by at most max_j |ds_j| (it is 1-Lipschitz in the max norm);
  // exp's and the sum's relative errors move the log by about as much; log and the
  // addition of the max round.
  const double eps = score_delta(delta, scale_factor, dk, k_norm_max, row);
  const double relative = exp_delta(row) + (n + 8) * kU32;
  return (eps + relative + 4 * kU32 * std::fabs(lse)) * (1 + 0x1p-6);
}

}  // namespace kvbench
