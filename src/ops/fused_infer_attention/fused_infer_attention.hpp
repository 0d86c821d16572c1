#pragma once
#include <memory>

#include "ops/operator.hpp"

namespace kvbench {

// aclnn.FusedInferAttentionScoreV3 (Ascend, seed 003; specs/fused_infer_attention_score.md).
std::unique_ptr<Operator> make_fused_infer_attention_operator();

}  // namespace kvbench
