#version 450
#extension GL_GOOGLE_include_directive : require
// The merge of the shared attention kernel (attention_core.glsl): for each output vector,
// O = sum_s exp(m_s - M) acc_s / sum_s exp(m_s - M) l_s over its splits, written in the
// output's dtype. A vector with no visible key is NaN (empty_zeros 0, torch's softmax) or
// zeros (1). One invocation per 32-bit word of the output (two f16/bf16 or one f32); the
// one holding a vector's first element also writes its log-sum-exp M + log(L) (+inf for
// an empty vector) when the plan gives the vector an lse index and has_lse is set.
#include "quant.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Partials { float partials[]; };
layout(std430, binding = 1) readonly buffer Merge { uint merge[]; };  // per vector: first slot, splits, lse index
layout(std430, binding = 2) writeonly buffer Out { uint out_[]; };
layout(std430, binding = 3) writeonly buffer Lse { float lse[]; };
layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint elements, head_dim, out_dtype, empty_zeros, has_lse;
} pc;

void main() {
  const uint D = pc.head_dim;
  const uint per_word = 32u / dtype_bits(pc.out_dtype);
  const uint word = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 64u + gl_LocalInvocationID.x;
  if (word * per_word >= pc.elements) return;
  const uint e0 = word * per_word;
  const uint vec = e0 / D, d0 = e0 % D;
  const uint first = merge[3u * vec], nsplit = merge[3u * vec + 1u];
  float M = uintBitsToFloat(0xff800000u);
  for (uint s = 0u; s < nsplit; ++s) M = max(M, partials[(first + s) * (D + 2u)]);
  float L = 0.0;
  float o[2] = float[2](0.0, 0.0);
  for (uint s = 0u; s < nsplit; ++s) {
    const uint base = (first + s) * (D + 2u);
    const float m = partials[base];
    if (isinf(m) && m < 0.0) continue;  // a split with no visible key
    const float w = exp(m - M);
    L += w * partials[base + 1u];
    for (uint k = 0u; k < per_word; ++k) o[k] += w * partials[base + 2u + d0 + k];
  }
  const bool zero = L == 0.0 && pc.empty_zeros != 0u;
  if (pc.has_lse != 0u && d0 == 0u && merge[3u * vec + 2u] != 0xffffffffu)
    lse[merge[3u * vec + 2u]] = L == 0.0 ? uintBitsToFloat(0x7f800000u) : M + log(L);
  const float r0 = zero ? 0.0 : o[0] / L, r1 = zero ? 0.0 : o[1] / L;
  if (per_word == 1u) out_[word] = floatBitsToUint(r0);
  else out_[word] = encode_float(r0, pc.out_dtype) | (encode_float(r1, pc.out_dtype) << 16u);
}
