#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_arithmetic : require  // the decode body (attention_decode.glsl)
// ggml.FLASH_ATTN_EXT (specs/ggml.md): the shared attention_core.glsl over K and V in
// ggml's types, read as ggml stores them (ggml_rows.glsl); the score hook applies softcap,
// the mask and ALiBi's slope as ggml does; the sinks join in the shared finish
// (attention_finish.glsl). Every step in f32.
#include "ggml_rows.glsl"

layout(constant_id = 1) const uint GGML_DV = 128u;
#define DV GGML_DV
// K's and V's ggml types (GT_*): constants, so that only their loads are compiled in.
layout(constant_id = 2) const uint K_TYPE = 1u;
layout(constant_id = 3) const uint V_TYPE = 1u;

layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint num_items, num_heads, num_kv_heads, n_batch;
  uint n_kv, k_row_bytes, v_row_bytes, has_mask;
  uint mask_heads, mask_batch;
  float scale, softcap;
} pc;

struct Batch {
  uint b;
};
#include "attention_core.glsl"

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { uint k[]; };
layout(std430, binding = 2) readonly buffer V { uint v[]; };
layout(std430, binding = 3) readonly buffer Mask { uint mask[]; };
layout(std430, binding = 4) readonly buffer Slopes { float slopes[]; };

GGML_ROW_READER(key_element, k)
GGML_ROW_READER(value_element, v)

Batch batch_info(uint b) { return Batch(b); }

uint kv_length(Batch bt) { return pc.n_kv; }

int last_key(Batch bt, uint row) { return int(pc.n_kv) - 1; }  // the mask removes keys

float query_at(Batch bt, uint row, uint head, uint d) { return q[((bt.b * pc.num_heads + head) * pc.n_batch + row) * D + d]; }

uvec2 key_handle(Batch bt, uint t) { return uvec2((bt.b * pc.num_kv_heads) * pc.n_kv + t, 0u); }

void load_key(Batch bt, uint hk, uvec2 t, uint lane, out float kk[DPL]) {
  const uint row = t.x + hk * pc.n_kv;
  for (uint j = 0u; j < DPL; ++j) kk[j] = key_element(K_TYPE, row * pc.k_row_bytes, key_dim(lane, j));
}

void load_value(Batch bt, uint hk, uvec2 t, uint lane, out float vv[DPLV]) {
  const uint row = t.x + hk * pc.n_kv;
  for (uint j = 0u; j < DPLV; ++j) vv[j] = value_element(V_TYPE, row * pc.v_row_bytes, lane * DPLV + j);
}

float score(Batch bt, uint row, uint head, uint t, float dot) {
  float s = dot * pc.scale;
  if (pc.softcap > 0.0) s = pc.softcap * tanh(s / pc.softcap);
  if (pc.has_mask != 0u) {
    const uint plane = (bt.b % pc.mask_batch) * pc.mask_heads + head % pc.mask_heads;
    const uint mi = (plane * pc.n_batch + row) * pc.n_kv + t;
    const float m = unpackHalf2x16((mask[mi >> 1u] >> ((mi & 1u) * 16u)) & 0xffffu).x;
    if (isinf(m) && m < 0.0) return m;
    s += slopes[head] * m;
  }
  return s;
}
