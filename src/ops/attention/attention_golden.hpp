#pragma once
// What the attention operators' goldens share beyond the reference itself.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "check/expected.hpp"
#include "core/dtype.hpp"
#include "ref/attention.hpp"
#include "ref/attention_variants.hpp"

namespace kvbench {

// Gives a plain attention output its per-element bound (specs/comparison.md "Bounds from
// the definition"): bound[i], attend()'s bound before the output's rounding (bf16 bits),
// plus one unit in the last place of `dtype` at |golden| + bound[i] (the golden's rounding
// and a permitted value's), rounded up to f32 and then up to bf16 (golden format 5's BF16
// bound: each rounding up, so never below the derivation's; in place: move the vector in);
// and the NaN permissions of nan_ok.
void set_attention_bound(Expected& e, DType dtype, std::vector<uint16_t> bound, const NanPermits& nan_ok);
// The same from bounds in double (FIA's softmaxLse), each first rounded up to bf16.
void set_attention_bound(Expected& e, DType dtype, const std::vector<double>& bound);

// The precision steps of a shared permitted implementation of attention (with_attention_variants
// in ops/fault.hpp), or nullopt for another name (an operator's own variant, or none).
// `p_dtype`: the dtype an implementation that rounds the unnormalized exp(s - max) rounds it to
// (the operator's P dtype: its query's).
std::optional<PrecisionSteps> attention_steps(const std::string& variant, DType p_dtype);

// The fault pv_reads_past_sequence (MHCA, FIA): a kernel that runs P @ V over a sequence's
// last page (block) whole reads value rows [end, page_end) past the sequence, which the
// suite poisons, with weight 0; where one element is not finite, 0 * NaN makes that channel
// NaN in every row given (a weight-0 key inside the sequence may give NaN: not there).
void past_sequence_nan(const std::vector<QueryRow>& rows, const RowSource& values, int64_t dv, int64_t end,
                       int64_t page_end);

}  // namespace kvbench
