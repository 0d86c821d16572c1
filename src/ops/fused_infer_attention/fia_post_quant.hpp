#pragma once
// aclnn.FusedInferAttentionScoreV3's post-quant INT8 output: the golden codes and their
// boundary alternates (specs/fused_infer_attention_quant.md "Post-quant").
#include <cstdint>
#include <vector>

#include "check/expected.hpp"
#include "ops/fused_infer_attention/fia_params.hpp"
#include "ops/operator.hpp"

namespace kvbench {

// Whether row i of batch b sees one key at most (its band, before any mask).
bool fia_single_key(const FiaParams& p, int64_t b, int64_t i);

// attentionOut as int8 codes from `exact` (in double, before any output rounding) and the
// rows' log-sum-exp (a row with none: code 0); `half_away`: the fault post_quant_half_away.
Expected fia_post_quantize(const FiaParams& p, const Args& args, const TensorSet& in,
                           const std::vector<double>& row_lse, std::vector<double> exact, bool half_away);

}  // namespace kvbench
