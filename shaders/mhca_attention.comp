#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
// MultiHeadCacheAttention step 2: attention over the cache, read in place through
// cachestarts (no gather copy), dequantizing int8/int4 rows as they are loaded.
//
// Work is planned on the host as items (src/ops/multi_head_cache_attention/attention_plan.cpp):
// one item = one batch b, one kv head, up to QT query vectors that share it (the q heads
// of a GQA group for a decode token; consecutive rows and heads for prefill), and one
// split [t0, t1) of the KV length. Eight lanes serve an item: lane l owns dims
// [l*D/8, (l+1)*D/8) of every vector, loads its slice of each K/V row with wide loads, and
// the score is summed over the eight lanes with a shuffle butterfly (no shared memory, no
// barriers: lavapipe JIT-compiles barrier-free shaders fast). Each item keeps an online
// softmax (max m, sum l, accumulator) per vector and writes it to `partials`;
// mhca_merge.comp combines the splits of each vector.
#include "quant.glsl"
#include "mhca_common.glsl"

const uint LANES = 8u;
const uint QT = 4u;          // query vectors per item
const uint MAX_DPL = 32u;    // dims per lane: head_dim <= 256

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Query { uint query[]; };
layout(std430, binding = 1) readonly buffer Cache { uint cache[]; };
layout(std430, binding = 1) readonly buffer Cache4 { uvec4 cache4[]; };
layout(std430, binding = 2) readonly buffer Scale { uint scale[]; };
layout(std430, binding = 3) readonly buffer Cachestarts { uint cachestarts[]; };
layout(std430, binding = 4) readonly buffer Seqstarts { uint seqstarts[]; };
layout(std430, binding = 5) readonly buffer Kvstarts { uint kvstarts[]; };
layout(std430, binding = 6) readonly buffer AttnMask { uint attn_mask[]; };
layout(std430, binding = 7) readonly buffer Slopes { float slopes[]; };
// Per batch: slot base, number of splits, split length. Per item: b, kv head, v0, nv, split.
layout(std430, binding = 8) readonly buffer BatchPlan { uint batch_plan[]; };
layout(std430, binding = 9) readonly buffer Items { uint items[]; };
layout(std430, binding = 10) writeonly buffer Partials { float partials[]; };

float lane_sum(float x) {
  // Butterfly over the 8 lanes of an item (aligned groups of 8 within the subgroup).
  x += subgroupShuffleXor(x, 4u);
  x += subgroupShuffleXor(x, 2u);
  x += subgroupShuffleXor(x, 1u);
  return x;
}

// Loads this lane's dpl elements of the cache row starting at element `base` and
// dequantizes them with the row's scales (scale row `sbase`).
void load_row(uint base, uint sbase, uint lane, uint dpl, out float row[MAX_DPL]) {
  const uint bits = dtype_bits(pc.cache_dtype);
  const uint first = base + lane * dpl;
  const uint words = dpl * bits / 32u;
  uint w[MAX_DPL];
  if ((words & 3u) == 0u) {
    const uint q0 = first * bits / 128u;
    for (uint k = 0u; k < words / 4u; ++k) {
      const uvec4 v = cache4[q0 + k];
      w[4u * k] = v.x; w[4u * k + 1u] = v.y; w[4u * k + 2u] = v.z; w[4u * k + 3u] = v.w;
    }
  } else {
    const uint w0 = first * bits / 32u;
    for (uint k = 0u; k < words; ++k) w[k] = cache[w0 + k];
  }
  const uint per_word = 32u / bits;
  if (pc.quant_bit == 0u) {
    for (uint j = 0u; j < dpl; ++j) {
      const uint raw = bits == 32u ? w[j] : (w[j / per_word] >> ((j % per_word) * bits)) & ((1u << bits) - 1u);
      row[j] = decode_float(raw, pc.cache_dtype);
    }
    return;
  }
  const uint G = pc.quant_group, sbits = dtype_bits(pc.scale_dtype);
  uint last_group = 0xffffffffu;
  float s = 0.0;
  for (uint j = 0u; j < dpl; ++j) {
    const uint g = (lane * dpl + j) / G;
    if (g != last_group) {
      s = decode_float(LOAD_BITS(scale, sbase + g, sbits), pc.scale_dtype);
      last_group = g;
    }
    const int q = sign_extend((w[j / per_word] >> ((j % per_word) * bits)) & ((1u << bits) - 1u), bits);
    // PMX dequantizes into T1 through the scale dtype: T1(S(q * s)); q * s is exact in f32.
    row[j] = round_to(round_to(float(q) * s, pc.scale_dtype), pc.t1_dtype);
  }
}

uint cache_row_index(uint b, uint t) {
  if (pc.cache_mode == 0u) return uint(LOAD_I64(cachestarts, b)) + t;
  return uint(LOAD_I64(cachestarts, b * pc.max_pages + t / pc.page_size)) + t % pc.page_size;
}

void main() {
  const uint item = gl_GlobalInvocationID.x / LANES;
  const uint lane = gl_GlobalInvocationID.x % LANES;
  if (item >= pc.num_items) return;  // whole groups of 8 lanes leave together
  const uint b = items[5u * item], hk = items[5u * item + 1u], v0 = items[5u * item + 2u];
  const uint nv = items[5u * item + 3u], split = items[5u * item + 4u];
  const uint slot_base = batch_plan[3u * b], nsplit = batch_plan[3u * b + 1u], chunk = batch_plan[3u * b + 2u];
  const uint D = pc.head_dim, H = pc.num_heads, G = pc.num_heads / pc.num_kv_heads;
  const uint dpl = D / LANES;
  const uint seq0 = uint(LOAD_I64(seqstarts, b)), seqlen = uint(LOAD_I64(seqstarts, b + 1u)) - seq0;
  const uint kv0 = uint(LOAD_I64(kvstarts, b)), kvlen = uint(LOAD_I64(kvstarts, b + 1u)) - kv0;
  const uint offset = kvlen - seqlen;  // = start_pos[b]
  const bool causal = pc.is_causal != 0u && seqlen > 1u && b >= pc.decoding_batches;
  const bool limited = causal || pc.is_alibi != 0u;  // PMX's ALiBi mask is -inf past the diagonal too
  const float inv_sqrt_d = 1.0 / sqrt(float(D));
  const uint t1_bits = dtype_bits(pc.t1_dtype);

  float q[QT][MAX_DPL];
  float acc[QT][MAX_DPL];
  float m[QT], l[QT], slope[QT];
  uint row_n[QT], head[QT], last_t[QT];
  uint t_stop = 0u;
  for (uint k = 0u; k < QT; ++k) {
    m[k] = uintBitsToFloat(0xff800000u);
    l[k] = 0.0;
    for (uint j = 0u; j < MAX_DPL; ++j) acc[k][j] = 0.0;
    if (k >= nv) continue;
    const uint v = v0 + k, i = v / G;
    row_n[k] = seq0 + i;
    head[k] = hk * G + v % G;
    slope[k] = pc.is_alibi != 0u ? slopes[head[k]] : 0.0;
    last_t[k] = limited ? min(kvlen - 1u, i + offset) : kvlen - 1u;
    t_stop = max(t_stop, last_t[k] + 1u);
    const uint qbase = (row_n[k] * H + head[k]) * D + lane * dpl;
    for (uint j = 0u; j < dpl; ++j) q[k][j] = decode_float(LOAD_BITS(query, qbase + j, t1_bits), pc.t1_dtype) * inv_sqrt_d;
  }
  const uint t0 = split * chunk;
  const uint t1 = min(min(t0 + chunk, kvlen), t_stop);
  const uint groups = pc.quant_bit != 0u ? D / pc.quant_group : 1u;

  for (uint t = t0; t < t1; ++t) {
    const uint T = cache_row_index(b, t);
    float kr[MAX_DPL];
    load_row(mhca_row(T, 0u, hk, D), mhca_row(T, 0u, hk, groups), lane, dpl, kr);
    float p[QT];
    for (uint k = 0u; k < QT; ++k) {
      p[k] = 0.0;
      if (k >= nv) continue;
      float partial = 0.0;
      for (uint j = 0u; j < dpl; ++j) partial += q[k][j] * kr[j];
      float s = lane_sum(partial);
      if (t > last_t[k]) continue;  // causal / ALiBi future position: -inf
      float add = 0.0;
      bool has_add = false;
      if (pc.is_alibi != 0u) {
        // PMX builds the ALiBi mask in T1: T1(slope_T1 * T1(distance)).
        const float distance = round_to(float(int(t) - int(offset) - int(row_n[k] - seq0)), pc.t1_dtype);
        add = round_to(slope[k] * distance, pc.t1_dtype);
        has_add = true;
      }
      if (pc.mask_rank != 0u) {
        const uint mrow = pc.mask_rank == 3u ? head[k] * pc.total_rows + row_n[k] : row_n[k];
        const float mv = decode_float(LOAD_BITS(attn_mask, mrow * pc.mask_cols + kv0 + t, t1_bits), pc.t1_dtype);
        add = has_add ? round_to(add + mv, pc.t1_dtype) : mv;  // the ALiBi mask + attn_mask, in T1
        has_add = true;
      }
      s += add;
      if (isinf(s) && s < 0.0) continue;
      const float m_new = max(m[k], s);
      const float rescale = exp(m[k] - m_new);
      p[k] = exp(s - m_new);
      l[k] = l[k] * rescale + p[k];
      for (uint j = 0u; j < dpl; ++j) acc[k][j] *= rescale;
      m[k] = m_new;
    }
    float vr[MAX_DPL];
    load_row(mhca_row(T, 1u, hk, D), mhca_row(T, 1u, hk, groups), lane, dpl, vr);
    for (uint k = 0u; k < QT; ++k)
      for (uint j = 0u; j < dpl; ++j) acc[k][j] += p[k] * vr[j];
  }

  for (uint k = 0u; k < nv; ++k) {
    const uint v = v0 + k;
    const uint slot = slot_base + ((v / G) * H + head[k]) * nsplit + split;
    const uint base = slot * (D + 2u);
    if (lane == 0u) {
      partials[base] = m[k];
      partials[base + 1u] = l[k];
    }
    for (uint j = 0u; j < dpl; ++j) partials[base + 2u + lane * dpl + j] = acc[k][j];
  }
}
