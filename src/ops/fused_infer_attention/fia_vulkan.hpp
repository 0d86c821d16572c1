#pragma once
// aclnn.FusedInferAttentionScoreV3 on the Vulkan attention kernel (fia_vulkan.cpp).
#include "ops/attention/attention_kernel.hpp"
#include "ops/fused_infer_attention/fia_params.hpp"
#include "ops/operator.hpp"

namespace kvbench {

class Runtime;

// The kernel's Q/K head size (D plus MLA's rope channels) and V's.
inline AttentionHeads fia_heads(const FiaParams& p) { return {.key_dim = p.D + p.rope, .value_dim = p.Dv}; }

// Runs the case on the device: uploads `io`, dispatches, downloads the outputs into `io`.
// Returns the device time in ms.
double fia_run_vulkan(const FiaParams& p, const Args& args, Runtime& rt, TensorSet& io);

}  // namespace kvbench
