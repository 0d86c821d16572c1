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
#include "lane_sum.glsl"
#include "mhca_common.glsl"

const uint LANES = 8u;
const uint QT = 4u;  // query vectors per item
// Specialization constants: with head_dim and the cache's bits fixed at pipeline creation
// every per-lane loop has a constant trip count, so lavapipe keeps the arrays in
// registers instead of scattering them to memory (measured: 1.5 s -> see the spec).
layout(constant_id = 0) const uint D = 128u;
layout(constant_id = 1) const uint CACHE_BITS = 8u;
layout(constant_id = 2) const uint QG = 8u;  // quant_group (1 when unquantized)
const uint DPL = D / LANES;                  // dims per lane
const uint WORDS = DPL * CACHE_BITS / 32u;   // 32-bit words per lane per row
const uint PER_WORD = 32u / CACHE_BITS;

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Query { uint query[]; };
layout(std430, binding = 1) readonly buffer Cache { uint cache[]; };
layout(std430, binding = 1) readonly buffer Cache4 { uvec4 cache4[]; };
layout(std430, binding = 1) readonly buffer Cache2 { uvec2 cache2[]; };
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

// Loads this lane's DPL elements of the cache row starting at element `base` and
// dequantizes them with the row's scales (scale row `sbase`).
void load_row(uint base, uint sbase, uint lane, out float row[DPL]) {
  const uint first_word = (base + lane * DPL) / PER_WORD;  // not * bits / 32: that overflows past 512 MiB
  uint w[WORDS];
  if (WORDS % 4u == 0u) {
    for (uint k = 0u; k < WORDS / 4u; ++k) {
      const uvec4 v = cache4[first_word / 4u + k];
      w[4u * k] = v.x; w[4u * k + 1u] = v.y; w[4u * k + 2u] = v.z; w[4u * k + 3u] = v.w;
    }
  } else if (WORDS % 2u == 0u) {
    for (uint k = 0u; k < WORDS / 2u; ++k) {
      const uvec2 v = cache2[first_word / 2u + k];
      w[2u * k] = v.x; w[2u * k + 1u] = v.y;
    }
  } else {
    for (uint k = 0u; k < WORDS; ++k) w[k] = cache[first_word + k];
  }
  if (pc.quant_bit == 0u) {
    for (uint j = 0u; j < DPL; ++j) {
      const uint raw = CACHE_BITS == 32u ? w[j] : (w[j / PER_WORD] >> ((j % PER_WORD) * CACHE_BITS)) & ((1u << CACHE_BITS) - 1u);
      row[j] = decode_float(raw, pc.cache_dtype);
    }
    return;
  }
  // The lane's scales. When quant_group divides the lane's DPL dims (or the other way
  // round) each element's scale has a constant index, so they stay in registers and are
  // loaded once per row; otherwise each element loads its own.
  const uint sbits = dtype_bits(pc.scale_dtype);
  const bool groups_in_lane = DPL % QG == 0u, lane_in_group = QG % DPL == 0u;
  const uint NS = groups_in_lane ? DPL / QG : 1u;
  float scales[NS];
  const uint g_first = lane * DPL / QG;
  if (groups_in_lane || lane_in_group) {
    if (sbits == 16u && NS % 2u == 0u) {  // pairs of f16 scales share a word (g_first is even)
      for (uint k = 0u; k < NS / 2u; ++k) {
        const uint word = scale[(sbase + g_first) / 2u + k];
        scales[2u * k] = decode_float(word & 0xffffu, pc.scale_dtype);
        scales[2u * k + 1u] = decode_float(word >> 16u, pc.scale_dtype);
      }
    } else {
      for (uint k = 0u; k < NS; ++k) scales[k] = decode_float(LOAD_BITS(scale, sbase + g_first + k, sbits), pc.scale_dtype);
    }
  }
  for (uint j = 0u; j < DPL; ++j) {
    const float s = (groups_in_lane || lane_in_group)
                        ? scales[groups_in_lane ? j / QG : 0u]
                        : decode_float(LOAD_BITS(scale, sbase + (lane * DPL + j) / QG, sbits), pc.scale_dtype);
    const int q = sign_extend((w[j / PER_WORD] >> ((j % PER_WORD) * CACHE_BITS)) & ((1u << CACHE_BITS) - 1u), CACHE_BITS);
    // PMX dequantizes into T1 through the scale dtype: T1(S(q * s)). The product is exact
    // in f32 for an f16 scale and rounded once by the multiply for an f32 scale; T1 and S
    // are f16 or f32, so at most one f16 rounding remains.
    const float x = float(q) * s;
    row[j] = (pc.scale_dtype == DT_F16 || pc.t1_dtype == DT_F16) ? round_f16_fast(x) : x;
  }
}

void main() {
  const uint item = gl_GlobalInvocationID.x / LANES;
  const uint lane = gl_GlobalInvocationID.x % LANES;
  if (item >= pc.num_items) return;  // whole groups of 8 lanes leave together
  const uint b = items[5u * item], hk = items[5u * item + 1u], v0 = items[5u * item + 2u];
  const uint nv = items[5u * item + 3u], split = items[5u * item + 4u];
  const uint slot_base = batch_plan[3u * b], nsplit = batch_plan[3u * b + 1u], chunk = batch_plan[3u * b + 2u];
  const uint H = pc.num_heads, G = pc.num_heads / pc.num_kv_heads;
  const uint seq0 = uint(LOAD_I64(seqstarts, b)), seqlen = uint(LOAD_I64(seqstarts, b + 1u)) - seq0;
  const uint kv0 = uint(LOAD_I64(kvstarts, b)), kvlen = uint(LOAD_I64(kvstarts, b + 1u)) - kv0;
  const uint offset = kvlen - seqlen;  // = start_pos[b]
  const bool causal = pc.is_causal != 0u && seqlen > 1u && b >= pc.decoding_batches;
  const bool limited = causal || pc.is_alibi != 0u;  // PMX's ALiBi mask is -inf past the diagonal too
  const float inv_sqrt_d = 1.0 / sqrt(float(D));
  const uint t1_bits = dtype_bits(pc.t1_dtype);

  float q[QT][DPL];
  float acc[QT][DPL];
  float m[QT], l[QT], slope[QT];
  uint row_n[QT], head[QT], last_t[QT];
  uint t_stop = 0u;
  for (uint k = 0u; k < QT; ++k) {
    m[k] = uintBitsToFloat(0xff800000u);
    l[k] = 0.0;
    for (uint j = 0u; j < DPL; ++j) acc[k][j] = 0.0;
    if (k >= nv) continue;
    const uint v = v0 + k, i = v / G;
    row_n[k] = seq0 + i;
    head[k] = hk * G + v % G;
    slope[k] = pc.is_alibi != 0u ? slopes[head[k]] : 0.0;
    last_t[k] = limited ? min(kvlen - 1u, i + offset) : kvlen - 1u;
    t_stop = max(t_stop, last_t[k] + 1u);
    const uint qbase = (row_n[k] * H + head[k]) * D + lane * DPL;
    for (uint j = 0u; j < DPL; ++j) q[k][j] = decode_float(LOAD_BITS(query, qbase + j, t1_bits), pc.t1_dtype) * inv_sqrt_d;
  }
  const uint t0 = split * chunk;
  const uint t1 = min(min(t0 + chunk, kvlen), t_stop);
  const uint groups = pc.quant_bit != 0u ? D / pc.quant_group : 1u;

  uint page_row = 0u;  // cache row of the current page's first token (paged mode)
  for (uint t = t0; t < t1; ++t) {
    if (pc.cache_mode == 0u) {
      page_row = uint(LOAD_I64(cachestarts, b)) + t;
    } else if (t == t0 || t % pc.page_size == 0u) {  // one page-table read per page
      page_row = uint(LOAD_I64(cachestarts, b * pc.max_pages + t / pc.page_size)) - t % pc.page_size;
    }
    const uint T = pc.cache_mode == 0u ? page_row : page_row + t % pc.page_size;
    float kr[DPL];
    load_row(mhca_row(T, 0u, hk, D), mhca_row(T, 0u, hk, groups), lane, kr);
    float p[QT];
    for (uint k = 0u; k < QT; ++k) {
      p[k] = 0.0;
      if (k >= nv) continue;
      float partial = 0.0;
      for (uint j = 0u; j < DPL; ++j) partial += q[k][j] * kr[j];
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
      // The score is the same on the item's 8 lanes, so this branch is uniform: the
      // accumulator is rescaled only when the running maximum grows.
      if (s > m[k]) {
        const float rescale = exp(m[k] - s);
        l[k] *= rescale;
        for (uint j = 0u; j < DPL; ++j) acc[k][j] *= rescale;
        m[k] = s;
      }
      p[k] = exp(s - m[k]);
      l[k] += p[k];
    }
    float vr[DPL];
    load_row(mhca_row(T, 1u, hk, D), mhca_row(T, 1u, hk, groups), lane, vr);
    for (uint k = 0u; k < QT; ++k)
      for (uint j = 0u; j < DPL; ++j) acc[k][j] += p[k] * vr[j];
  }

  for (uint k = 0u; k < nv; ++k) {
    const uint v = v0 + k;
    const uint slot = slot_base + ((v / G) * H + head[k]) * nsplit + split;
    const uint base = slot * (D + 2u);
    if (lane == 0u) {
      partials[base] = m[k];
      partials[base + 1u] = l[k];
    }
    for (uint j = 0u; j < DPL; ++j) partials[base + 2u + lane * DPL + j] = acc[k][j];
  }
}
