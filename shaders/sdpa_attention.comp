#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_arithmetic : require  // the decode body (attention_decode.glsl)
// dnnl.SDPACompressedKV: the shared attention_core.glsl with every K/V element loaded
// through the generic element access, so that any layout, integer type and zero-point
// type dequantizes in the shader: (q - zp) * scale in f32.
#include "quant.glsl"
#include "sdpa_common.glsl"

struct Batch {
  uint n;
};
#include "attention_core.glsl"

layout(std430, binding = 0) readonly buffer Query { uint query[]; };
layout(std430, binding = 1) readonly buffer Key { uint key[]; };
layout(std430, binding = 2) readonly buffer ScaleK { uint scale_k[]; };
layout(std430, binding = 3) readonly buffer ZpK { uint zp_k[]; };
layout(std430, binding = 4) readonly buffer Value { uint value[]; };
layout(std430, binding = 5) readonly buffer ScaleV { uint scale_v[]; };
layout(std430, binding = 6) readonly buffer ZpV { uint zp_v[]; };
layout(std430, binding = 7) readonly buffer Scale { float scale[]; };
layout(std430, binding = 8) readonly buffer AttnMask { uint attn_mask[]; };

// K[n, kv head k, key s, dim d], dequantized.
float key_at(uint n, uint k, uint s, uint d) {
  const uint base = n * pc.num_kv_heads + k;
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
float value_at(uint n, uint k, uint s, uint d) {
  const uint row = (n * pc.num_kv_heads + k) * pc.S_kv + s;
  const uint raw = LOAD_BITS(value, row * D + d, dtype_bits(pc.v_dtype));
  if (pc.v_compressed == 0u) return decode_float(raw, pc.v_dtype);
  const uint gi = row * (D / pc.G) + d / pc.G;
  const float sc = decode_float(LOAD_BITS(scale_v, gi, dtype_bits(pc.sv_dtype)), pc.sv_dtype);
  const int zp = pc.has_zv != 0u ? decode_int(LOAD_BITS(zp_v, gi, dtype_bits(pc.zv_dtype)), pc.zv_dtype) : 0;
  return dequant_zero_point(decode_int(raw, pc.v_dtype), zp, sc);
}


Batch batch_info(uint n) { return Batch(n); }

uint kv_length(Batch bt) { return pc.S_kv; }

int last_key(Batch bt, uint row) {
  return pc.causal == 0u ? int(pc.S_kv) - 1
       : pc.causal == 1u ? min(int(row), int(pc.S_kv) - 1)
                         : min(int(row) + int(pc.S_kv) - int(pc.S_q), int(pc.S_kv) - 1);
}

float query_at(Batch bt, uint row, uint head, uint d) {
  const uint i = ((bt.n * pc.num_heads + head) * pc.S_q + row) * D + d;
  return decode_float(LOAD_BITS(query, i, dtype_bits(pc.q_dtype)), pc.q_dtype);
}

uvec2 key_handle(Batch bt, uint t) { return uvec2(t, 0u); }

// The key's handle is its token (.x).
void load_key(Batch bt, uint hk, uvec2 t, uint lane, out float k[DPL]) {
  for (uint j = 0u; j < DPL; ++j) k[j] = key_at(bt.n, hk, t.x, lane * DPL + j);
}

void load_value(Batch bt, uint hk, uvec2 t, uint lane, out float v[DPL]) {
  for (uint j = 0u; j < DPL; ++j) v[j] = value_at(bt.n, hk, t.x, lane * DPL + j);
}

float score(Batch bt, uint row, uint head, uint t, float dot) {
  const float sm_scale = scale[0];
  float s = pc.scale_op == 0u ? dot * sm_scale : dot / sm_scale;
  if (pc.has_mask != 0u) {
    const uint mi = bt.n * pc.mask_n_stride + head * pc.mask_h_stride + row * pc.mask_q_stride + t;
    s += decode_float(LOAD_BITS(attn_mask, mi, dtype_bits(pc.q_dtype)), pc.q_dtype);
  }
  return s;
}

