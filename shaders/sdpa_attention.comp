#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
// dnnl.SDPACompressedKV: the item and lane structure of mhca_attention.comp (8 lanes per
// item, each owning head_dim/8 dims; up to QT query vectors of one kv head; an online
// softmax per vector over one split of S_kv; a shuffle butterfly for the dot products),
// with every K/V element loaded through the generic element access so that any layout,
// integer type and zero-point type dequantizes in the shader: (q - zp) * scale in f32.
#include "quant.glsl"
#include "lane_sum.glsl"
#include "sdpa_common.glsl"

const uint LANES = 8u;
const uint QT = 4u;
layout(constant_id = 0) const uint D = 128u;
const uint DPL = D / LANES;

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Query { uint query[]; };
layout(std430, binding = 1) readonly buffer Key { uint key[]; };
layout(std430, binding = 2) readonly buffer ScaleK { uint scale_k[]; };
layout(std430, binding = 3) readonly buffer ZpK { uint zp_k[]; };
layout(std430, binding = 4) readonly buffer Value { uint value[]; };
layout(std430, binding = 5) readonly buffer ScaleV { uint scale_v[]; };
layout(std430, binding = 6) readonly buffer ZpV { uint zp_v[]; };
layout(std430, binding = 7) readonly buffer Scale { float scale[]; };
layout(std430, binding = 8) readonly buffer AttnMask { uint attn_mask[]; };
layout(std430, binding = 9) readonly buffer Items { uint items[]; };  // n, kv head, v0, nv, split
layout(std430, binding = 10) writeonly buffer Partials { float partials[]; };

// K[n, kv head k, key s, dim d], dequantized.
float load_key(uint n, uint k, uint s, uint d) {
  const uint base = n * pc.H_kv + k;
  const uint idx = pc.k_layout == 0u ? (base * pc.S_kv + s) * D + d : (base * D + d) * pc.S_kv + s;
  const uint raw = LOAD_BITS(key, idx, dtype_bits(pc.k_dtype));
  if (pc.k_compressed == 0u) return decode_float(raw, pc.k_dtype);
  const uint groups = D / pc.G;
  const uint gi = pc.k_layout == 0u ? (base * pc.S_kv + s) * groups + d / pc.G : (base * groups + d / pc.G) * pc.S_kv + s;
  const float sc = decode_float(LOAD_BITS(scale_k, gi, dtype_bits(pc.sk_dtype)), pc.sk_dtype);
  const int zp = pc.has_zk != 0u ? decode_int(LOAD_BITS(zp_k, gi, dtype_bits(pc.zk_dtype)), pc.zk_dtype) : 0;
  return dequant_zero_point(decode_int(raw, pc.k_dtype), zp, sc);
}

// V[n, kv head k, key s, dim d], dequantized.
float load_value(uint n, uint k, uint s, uint d) {
  const uint row = (n * pc.H_kv + k) * pc.S_kv + s;
  const uint raw = LOAD_BITS(value, row * D + d, dtype_bits(pc.v_dtype));
  if (pc.v_compressed == 0u) return decode_float(raw, pc.v_dtype);
  const uint gi = row * (D / pc.G) + d / pc.G;
  const float sc = decode_float(LOAD_BITS(scale_v, gi, dtype_bits(pc.sv_dtype)), pc.sv_dtype);
  const int zp = pc.has_zv != 0u ? decode_int(LOAD_BITS(zp_v, gi, dtype_bits(pc.zv_dtype)), pc.zv_dtype) : 0;
  return dequant_zero_point(decode_int(raw, pc.v_dtype), zp, sc);
}

void main() {
  const uint item = gl_GlobalInvocationID.x / LANES;
  const uint lane = gl_GlobalInvocationID.x % LANES;
  if (item >= pc.num_items) return;  // whole groups of 8 lanes leave together
  const uint n = items[5u * item], hk = items[5u * item + 1u], v0 = items[5u * item + 2u];
  const uint nv = items[5u * item + 3u], split = items[5u * item + 4u];
  const uint Gq = pc.H / pc.H_kv;
  const float sm_scale = scale[0];
  const uint qb = dtype_bits(pc.q_dtype);

  float q[QT][DPL];
  float acc[QT][DPL];
  float m[QT], l[QT];
  uint row[QT], head[QT];
  int last[QT];  // last visible key of each vector (causal), -1 when none
  int t_stop = -1;
  for (uint k = 0u; k < QT; ++k) {
    m[k] = uintBitsToFloat(0xff800000u);
    l[k] = 0.0;
    for (uint j = 0u; j < DPL; ++j) acc[k][j] = 0.0;
    if (k >= nv) continue;
    const uint v = v0 + k;
    row[k] = v / Gq;
    head[k] = hk * Gq + v % Gq;
    last[k] = pc.causal == 0u ? int(pc.S_kv) - 1
            : pc.causal == 1u ? min(int(row[k]), int(pc.S_kv) - 1)
                              : min(int(row[k]) + int(pc.S_kv) - int(pc.S_q), int(pc.S_kv) - 1);
    t_stop = max(t_stop, last[k]);
    const uint qbase = ((n * pc.H + head[k]) * pc.S_q + row[k]) * D + lane * DPL;
    for (uint j = 0u; j < DPL; ++j) q[k][j] = decode_float(LOAD_BITS(query, qbase + j, qb), pc.q_dtype);
  }
  const uint t0 = split * pc.chunk;
  const int t1 = min(min(int(t0 + pc.chunk), int(pc.S_kv)), t_stop + 1);
  for (int ti = int(t0); ti < t1; ++ti) {
    const uint t = uint(ti);
    float kr[DPL];
    for (uint j = 0u; j < DPL; ++j) kr[j] = load_key(n, hk, t, lane * DPL + j);
    float p[QT];
    for (uint k = 0u; k < QT; ++k) {
      p[k] = 0.0;
      if (k >= nv) continue;
      float partial = 0.0;
      for (uint j = 0u; j < DPL; ++j) partial += q[k][j] * kr[j];
      const float dot = lane_sum(partial);
      if (ti > last[k]) continue;  // removed by the implicit causal mask
      float s = pc.scale_op == 0u ? dot * sm_scale : dot / sm_scale;
      if (pc.has_mask != 0u) {
        const uint mi = n * pc.mask_n_stride + head[k] * pc.mask_h_stride + row[k] * pc.mask_q_stride + t;
        s += decode_float(LOAD_BITS(attn_mask, mi, qb), pc.q_dtype);
      }
      if (isinf(s) && s < 0.0) continue;
      if (s > m[k]) {  // uniform over the item's lanes
        const float rescale = exp(m[k] - s);
        l[k] *= rescale;
        for (uint j = 0u; j < DPL; ++j) acc[k][j] *= rescale;
        m[k] = s;
      }
      p[k] = exp(s - m[k]);
      l[k] += p[k];
    }
    float vr[DPL];
    for (uint j = 0u; j < DPL; ++j) vr[j] = load_value(n, hk, t, lane * DPL + j);
    for (uint k = 0u; k < QT; ++k)
      for (uint j = 0u; j < DPL; ++j) acc[k][j] += p[k] * vr[j];
  }
  for (uint k = 0u; k < nv; ++k) {
    const uint slot = ((n * pc.H + head[k]) * pc.S_q + row[k]) * pc.nsplit + split;
    const uint base = slot * (D + 2u);
    if (lane == 0u) {
      partials[base] = m[k];
      partials[base + 1u] = l[k];
    }
    for (uint j = 0u; j < DPL; ++j) partials[base + 2u + lane * DPL + j] = acc[k][j];
  }
}
