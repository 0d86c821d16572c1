#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
// The cpu kernel's merge (attention_merge_common.glsl has what it computes): one invocation
// per 32-bit output word (one f32, two f16/bf16, four i8) looping over its vector's splits;
// the one holding a vector's first element writes its log-sum-exp. On lavapipe it measured
// faster than the workgroup per vector of attention_merge_splits.comp, whose barriers cost
// more there than its shared weights save (specs/attention-kernels.md).
#include "attention_merge_common.glsl"

void main() {
  const uint D = pc.head_dim;
  const uint word = pc.first_vector * D / PER_WORD + grid_invocation();  // a wave's vectors only
  if (word * PER_WORD >= pc.elements) return;
  const uint e0 = word * PER_WORD;
  const uint vec = e0 / D, d0 = e0 % D;
  const uint first = merge[4u * vec], nsplit = merge[4u * vec + 1u];
  if (first == OTHER_WAVE) return;  // another wave's vector (plan_waves)
  float M = uintBitsToFloat(0xff800000u);
  for (uint s = 0u; s < nsplit; ++s) M = max(M, slot_ml((first + s) * (D + 2u)).x);
  float L = 0.0;
  float o[4] = float[4](0.0, 0.0, 0.0, 0.0);
  for (uint s = 0u; s < nsplit; ++s) {
    const uint base = (first + s) * (D + 2u);
    const vec2 ml = slot_ml(base);
    float x[4];
    slot_word(base, d0, x);
    if (isinf(ml.x) && ml.x < 0.0) continue;  // a split with no visible key
    const float w = exp(ml.x - M);
    L += w * ml.y;
    for (uint k = 0u; k < PER_WORD; ++k) o[k] += w * x[k];
  }
  if (d0 == 0u) write_lse(vec, M, L);
  write_word(word, vec, d0, o, M, L);
}
