#version 450
#extension GL_GOOGLE_include_directive : require
// dnnl.SDPACompressedKV: combine the splits of each query vector and write the output in
// the query's dtype; a row with no visible key is written as zeros (inf_as_zero).
// One invocation per 32-bit word of the output.
#include "quant.glsl"
#include "sdpa_common.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Partials { float partials[]; };
layout(std430, binding = 1) writeonly buffer Output { uint output_[]; };

void main() {
  const uint D = pc.head_dim;
  const uint per_word = 32u / dtype_bits(pc.q_dtype);
  const uint word = gl_GlobalInvocationID.x;
  if (word * per_word >= pc.N * pc.H * pc.S_q * D) return;
  const uint e0 = word * per_word;
  const uint vec = e0 / D, d0 = e0 % D;
  const uint first = vec * pc.nsplit;
  float M = uintBitsToFloat(0xff800000u);
  for (uint s = 0u; s < pc.nsplit; ++s) M = max(M, partials[(first + s) * (D + 2u)]);
  float L = 0.0;
  float o[2] = float[2](0.0, 0.0);
  for (uint s = 0u; s < pc.nsplit; ++s) {
    const uint base = (first + s) * (D + 2u);
    const float m = partials[base];
    if (isinf(m) && m < 0.0) continue;
    const float w = exp(m - M);
    L += w * partials[base + 1u];
    for (uint k = 0u; k < per_word; ++k) o[k] += w * partials[base + 2u + d0 + k];
  }
  const float r0 = L > 0.0 ? o[0] / L : 0.0, r1 = L > 0.0 ? o[1] / L : 0.0;
  if (per_word == 1u) output_[word] = floatBitsToUint(r0);
  else output_[word] = encode_float(r0, pc.q_dtype) | (encode_float(r1, pc.q_dtype) << 16u);
}
