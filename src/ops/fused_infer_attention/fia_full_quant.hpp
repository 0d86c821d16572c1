#pragma once
// aclnn.FusedInferAttentionScoreV3, full int8 (全量化): the generated INT8 query/key/value and
// per-tensor scales, P's quantization, and the tolerance of the INT8 -> FLOAT16 path
// (spec "Full int8").
#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "ops/args.hpp"
#include "ref/attention.hpp"

namespace kvbench {

// The scale of a generated INT8 tensor (query, key, value): R / 127, R the largest
// magnitude of its generator range; its codes are round-half-even(x / scale) of the draws.
double fia_code_scale(const Args& a, const std::string& tensor);
void fia_fill_codes(const Args& a, Tensor& t);

// An f32 value with its low 13 mantissa bits cleared: the 19 bits (sign, exponent, 10
// mantissa bits) a deqScale keeps on the device (aclnnTransQuantParam: "scale & 0xFFFFE000").
double fia_truncate_19_bits(double f32_value);

// quantScale1 as drawn from its range (f32), and the derived deqScale1 = scale_q * scale_k,
// deqScale2 = scale_v / quantScale1, each truncated to 19 bits.
double fia_quant_scale1(const Args& a);
double fia_deq_scale1(const Args& a);
double fia_deq_scale2(const Args& a);

// P's int8 code: AscendQuant(p, quantScale1, 0), half to even, saturated to [0, 127]
// (p = exp(s - max) is in (0, 1]).
inline double fia_p_code(double p, double quant_scale1) {
  constexpr double big = 0x1.8p52;  // (v + big) - big: nearest integer, ties to even
  const double v = p * quant_scale1;
  return std::clamp((v + big) - big, 0.0, 127.0);
}

// The atol of one query row of the INT8 -> FLOAT16 path (spec "Full int8"): a device's P
// code of each key, times its rescale, may differ from the golden's by
// K = 1 + quantScale1 * 2^-10 * (|m| + 3) codes: each of the two is within half a code of
// the exact exp(s - m) * quantScale1 (the device's against its running maximum, shrunk by
// the rescale exp(m_t - m) <= 1), and fp16 scores, exp and product move that exact value
// by at most 2^-10 * (|s| + 2) of it, with exp(s - m) * |s| <= |m| + 1. So |out - golden|
// <= K * sum_j |v_j,c| / l, v_j = deqScale2 * the value codes, l = sum exp(s - m);
// `v_sum` is that sum over the row's keys (the largest over its channels). A row of one
// key has P = exp(0) = 1 on every device, whatever its score: its code is
// round(quantScale1) by the tie rule, so the leading code of K goes (spec "Full int8").
inline double fia_full_quant_row_bound(double quant_scale1, double row_max, double lse, double v_sum,
                                       bool one_key) {
  if (!std::isfinite(lse)) return 0;
  const double l = std::exp(lse - row_max),
               k = (one_key ? 0 : 1) + quant_scale1 * std::ldexp(std::fabs(row_max) + 3, -10);
  return k * v_sum / l;
}

// The INT8 -> FLOAT16 atol of one kv head's rows: the largest over the rows and channels c
// of the row bound above with v_sum the row's sum over its keys of |v_c| (per channel sums
// from prefix sums over the keys [0, keys) of `values`).
double fia_full_quant_bound(double quant_scale1, int64_t dv, std::span<const QueryRow> rows,
                            const RowSource& values, int64_t keys, const std::vector<double>& row_max,
                            const std::vector<double>& row_lse);

}  // namespace kvbench
