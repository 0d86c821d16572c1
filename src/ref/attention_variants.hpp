#pragma once
// Permitted implementations of attention, emulated (specs/comparison.md "Permitted
// implementations"): the same operator computed in f32 with the precision steps a real
// kernel takes (where it rounds P, the order it sums in, exp2 for exp, a split of the keys
// merged, ...). `kvbench coverage --variants` runs each against the golden and its bound; a
// variant the bound does not cover is a bound too tight for the definition.
#include <cstdint>
#include <optional>

#include "core/dtype.hpp"

namespace kvbench {

struct PrecisionSteps {
  // What P @ V multiplies: P rounded as the golden rounds it (AttentionBlock::round_p, after
  // normalizing; f32 where the golden does not round), P left in f32 (flash), or the
  // unnormalized exp(s - max) rounded to `p_dtype` (f32: not rounded) with the sum divided
  // out at the end.
  enum class P { as_golden, unrounded, unnormalized } p = P::as_golden;
  DType p_dtype = DType::f32;
  bool descending = false;  // every sum over keys (and over channels in q . k) from the last term down
  int64_t split = 0;        // keys in splits of this many, each its own softmax, merged (flash decoding)
  bool exp2 = false;        // exp(x) as exp2(x * f32(log2 e)), the scores and the max scaled first
  bool ieee_zero_weight = false;  // every key of the call times its weight, 0 included: 0 * inf = NaN
  // Scores kept in a narrower dtype (rounded after q . k, after scaling and after the bias).
  std::optional<DType> score_dtype;
  // The running P @ V (and the final division) rounded to this dtype after each block of
  // `acc_block` keys, with its rescale factor (Ascend's fp16 prompt kernel).
  std::optional<DType> acc_dtype;
  int64_t acc_block = 128;
  // A split's normalized partial output stored in this dtype before the merge (PMX's split-K).
  std::optional<DType> partial_dtype;
  double sum_epsilon = 0;  // added to the softmax's denominator (PMX: 1e-6)
};

}  // namespace kvbench
