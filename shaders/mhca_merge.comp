#version 450
#extension GL_GOOGLE_include_directive : require
// MultiHeadCacheAttention step 3: combine the splits of each query vector,
// O = sum_s exp(m_s - M) acc_s / sum_s exp(m_s - M) l_s, and write attn_output in T1.
// One invocation per 32-bit word of the output (two f16 or one f32 element).
#include "quant.glsl"
#include "mhca_common.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Seqstarts { uint seqstarts[]; };
layout(std430, binding = 1) readonly buffer BatchPlan { uint batch_plan[]; };
layout(std430, binding = 2) readonly buffer Partials { float partials[]; };
layout(std430, binding = 3) writeonly buffer Output { uint attn_output[]; };

void main() {
  const uint D = pc.head_dim, H = pc.num_heads;
  const uint per_word = 32u / dtype_bits(pc.t1_dtype);
  const uint word = gl_GlobalInvocationID.x;
  if (word * per_word >= pc.total_rows * H * D) return;
  const uint e0 = word * per_word;
  const uint n = e0 / (H * D), h = e0 / D % H, d0 = e0 % D;
  uint lo = 0u, hi = pc.batches;
  while (hi - lo > 1u) {
    const uint mid = (lo + hi) / 2u;
    if (uint(LOAD_I64(seqstarts, mid)) <= n) lo = mid; else hi = mid;
  }
  const uint b = lo;
  const uint nsplit = batch_plan[3u * b + 1u];
  const uint first = batch_plan[3u * b] + ((n - uint(LOAD_I64(seqstarts, b))) * H + h) * nsplit;
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
  if (per_word == 1u) {
    attn_output[word] = floatBitsToUint(o[0] / L);
  } else {
    attn_output[word] = encode_float(o[0] / L, pc.t1_dtype) | (encode_float(o[1] / L, pc.t1_dtype) << 16u);
  }
}
