#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
// The gpu kernel's merge (attention_merge_common.glsl has what it computes): a workgroup of
// 256 per output vector. Its invocations take the splits in turn for M = max m_s and L,
// each weight exp(m_s - M) computed once into shared memory; then 4 groups of 64 take the
// output's 32-bit words, each group a quarter of the splits (so a vector of few words and
// many splits, a TP8 decode's, still spreads over 256 invocations), with loads coalesced
// across a group; group 0 adds the 4 partial sums and writes the word. Reductions go
// through shared memory in two levels (256 -> 16 -> 1): the same at every subgroup width,
// sums in a fixed order.
#define MERGE_WORKGROUP 256
#include "attention_merge_common.glsl"

// The plan gives no vector more splits than this (attention_plan.hpp kMaxMergeSplits).
const uint MAX_SPLITS = 512u;
const uint GROUPS = 4u;  // of 64 invocations, each a quarter of the splits
shared float weight_s[MAX_SPLITS];
shared float red_s[256];
shared float red16_s[16];
shared float part_s[GROUPS - 1u][64][4];  // groups 1-3's sums of one pass

// The maximum (is_max) or sum of every invocation's x.
float workgroup_reduce(float x, bool is_max) {
  const uint t = gl_LocalInvocationID.x;
  red_s[t] = x;
  barrier();
  if (t < 16u) {
    float r = red_s[16u * t];
    for (uint i = 1u; i < 16u; ++i) r = is_max ? max(r, red_s[16u * t + i]) : r + red_s[16u * t + i];
    red16_s[t] = r;
  }
  barrier();
  float r = red16_s[0];
  for (uint i = 1u; i < 16u; ++i) r = is_max ? max(r, red16_s[i]) : r + red16_s[i];
  return r;
}

void main() {
  const uint D = pc.head_dim;
  const uint t = gl_LocalInvocationID.x;
  const uint vec = pc.first_vector + grid_workgroup();  // a wave's vectors only
  if (vec * D >= pc.elements) return;  // the surplus of the grid's last row: the whole workgroup
  const uint first = merge[4u * vec], nsplit = merge[4u * vec + 1u];
  if (first == OTHER_WAVE) return;  // another wave's vector (plan_waves): the whole workgroup
  float M = uintBitsToFloat(0xff800000u);
  for (uint s = t; s < nsplit; s += 256u) M = max(M, slot_ml((first + s) * (D + 2u)).x);
  M = workgroup_reduce(M, true);
  float L = 0.0;
  for (uint s = t; s < nsplit; s += 256u) {
    const vec2 ml = slot_ml((first + s) * (D + 2u));
    // A split with no visible key weighs 0; an unwritten (NaN) slot makes the vector NaN.
    const float w = isinf(ml.x) && ml.x < 0.0 ? 0.0 : exp(ml.x - M);
    weight_s[s] = w;
    L += w == 0.0 ? 0.0 : w * ml.y;
  }
  L = workgroup_reduce(L, false);  // its barriers also publish weight_s
  if (t == 0u) write_lse(vec, M, L);
  const uint lane = t % 64u, group = t / 64u;
  // Every invocation runs the same passes, so the barriers in the loop are uniform.
  for (uint pass0 = 0u; pass0 < D; pass0 += 64u * PER_WORD) {
    const uint d0 = pass0 + lane * PER_WORD;
    float o[4] = float[4](0.0, 0.0, 0.0, 0.0);
    for (uint s = group; d0 < D && s < nsplit; s += GROUPS) {
      const float w = weight_s[s];
      if (w == 0.0) continue;
      float x[4];
      slot_word((first + s) * (D + 2u), d0, x);
      for (uint k = 0u; k < PER_WORD; ++k) o[k] += w * x[k];
    }
    if (group > 0u) part_s[group - 1u][lane] = o;
    barrier();
    if (group == 0u && d0 < D) {
      for (uint g = 0u; g + 1u < GROUPS; ++g)
        for (uint k = 0u; k < PER_WORD; ++k) o[k] += part_s[g][lane][k];
      write_word((vec * D + d0) / PER_WORD, vec, d0, o, M, L);
    }
    barrier();  // part_s is read before the next pass writes it
  }
}
