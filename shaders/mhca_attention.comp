#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_arithmetic : require  // the decode body (attention_decode.glsl)
// MultiHeadCacheAttention step 2: attention over the cache, read in place through
// cachestarts (no gather copy), dequantizing int8/int4 rows as they are loaded. The item,
// lane and online-softmax structure is the shared attention_core.glsl; this file gives
// its hooks.
#include "divide.glsl"
#include "quant.glsl"
#ifdef KVBENCH_F16_PRODUCT
#include "quant_f16.glsl"
#endif
#include "mhca_common.glsl"
#include "texels.glsl"

struct Batch {
  uint seq0, seqlen, kv0, kvlen, offset;  // offset = start_pos[b] = kvlen - seqlen
  bool limited;  // causal, or ALiBi (PMX's ALiBi mask is -inf past the diagonal too)
  uint b;
};
#include "attention_core.glsl"

// The cache's bits and quant_group are specialization constants too: the per-lane loops
// then have constant trip counts (see the spec's performance notes).
layout(constant_id = 1) const uint CACHE_BITS = 8u;
// quant_group (1 when unquantized). In the lanes kernel a group of a lane's DPL dims or a
// multiple of them is DPL here (one scale per lane, which one from pc.quant_group), so
// that those groups share one pipeline (lanes_constants in multi_head_cache_attention.cpp).
layout(constant_id = 2) const uint QG = 8u;
// Whether score() adds anything (ALiBi or attn_mask): a constant, because lavapipe runs a
// run-time branch's body as masked code for every key even when no lane takes it.
layout(constant_id = 3) const bool SCORE_ADDS = true;
// Whether the scales are f16: each q * s is then exact in f32 and rounds to f16 in five
// operations (round_f16_product) instead of round_f16_fast's ten.
layout(constant_id = 4) const bool SCALE_F16 = true;
// Whether every key's loads (cache codes 16 bytes at a time, scale words, page table) go
// through the `_texels` views instead of the storage buffers: one gather each on lavapipe
// instead of a loop over the lanes (shaders/texels.glsl). Set when the views cover their
// tensors.
layout(constant_id = 5) const bool TEXELS = false;
// The page size, 0 in offset mode: a key's page and row in it by a constant divisor, where a
// run-time one is an integer division per key that lavapipe does lane by lane. (By
// divide.glsl's multiply instead, which would let page sizes share a pipeline, the 4096-key
// paged decode measured about 10 % slower on lavapipe.)
layout(constant_id = 6) const uint PAGE_SIZE = 0u;
const uint WORDS = DPL * CACHE_BITS / 32u;   // 32-bit words per lane per row
const uint PER_WORD = 32u / CACHE_BITS;


layout(std430, binding = 0) readonly buffer Query { uint query[]; };
layout(std430, binding = 1) readonly buffer Cache { uint cache[]; };
layout(std430, binding = 1) readonly buffer Cache2 { uvec2 cache2[]; };
layout(std430, binding = 2) readonly buffer Scale { uint scale[]; };
layout(std430, binding = 3) readonly buffer Cachestarts { uint cachestarts[]; };
layout(std430, binding = 4) readonly buffer Seqstarts { uint seqstarts[]; };
layout(std430, binding = 5) readonly buffer Kvstarts { uint kvstarts[]; };
layout(std430, binding = 6) readonly buffer AttnMask { uint attn_mask[]; };
layout(std430, binding = 7) readonly buffer Slopes { float slopes[]; };
// The per-key loads again, as uvec4 texels (TEXELS).
layout(binding = 8) uniform usamplerBuffer cache_texels;
layout(binding = 9) uniform usamplerBuffer scale_texels;
layout(binding = 10) uniform usamplerBuffer cachestarts_texels;

// A scale's value from its bits, decoded by the constant SCALE_F16 (f16 or f32): a decode by
// the run-time dtype runs every format's decoder on lavapipe.
float scale_value(uint bits) { return SCALE_F16 ? f16_to_float(bits) : uintBitsToFloat(bits); }

// Loads this lane's DPL elements of the cache row starting at element `base` and
// dequantizes them with the row's scales (scale row `sbase`).
void load_row(uint base, uint sbase, uint lane, out float row[DPL]) {
  const uint first_word = (base + lane * DPL) / PER_WORD;  // not * bits / 32: that overflows past 512 MiB
  uint w[WORDS];
  if (TEXELS && WORDS % 4u == 0u) {
    for (uint k = 0u; k < WORDS / 4u; ++k) {
      const uvec4 v = texel_words(cache_texels, first_word + 4u * k, 4u);
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
  if (CACHE_BITS >= 16u) {  // quant_bit 0: the cache holds T1 floats (a constant: lavapipe runs both sides of a run-time branch)
    for (uint j = 0u; j < DPL; ++j) {
      const uint raw = CACHE_BITS == 32u ? w[j] : (w[j / PER_WORD] >> ((j % PER_WORD) * CACHE_BITS)) & ((1u << CACHE_BITS) - 1u);
      row[j] = decode_float(raw, pc.cache_dtype);
    }
    return;
  }
  // The lane's scales. When quant_group divides the lane's DPL dims (or the other way
  // round) each element's scale has a constant index, so they stay in registers and are
  // loaded once per row; otherwise each element loads its own.
  const uint sbits = SCALE_F16 ? 16u : 32u;
  const bool groups_in_lane = DPL % QG == 0u, lane_in_group = QG % DPL == 0u;
  const uint NS = groups_in_lane ? DPL / QG : 1u;
  uint scale_bits[NS];
#ifdef KVBENCH_TILES
  const uint g_first = lane * DPL / QG;
#else
  const uint g_first = QG < DPL ? lane * DPL / QG : divide_by_magic(lane * DPL, pc.quant_group, pc.qg_magic).x;
#endif
  if (groups_in_lane || lane_in_group) {
    if (sbits == 16u && NS % 2u == 0u) {  // pairs of f16 scales share a word (g_first is even)
      // A lane's NS / 2 words start at a multiple of NS / 2 (a row holds LANES * NS scales).
      const uint w0 = (sbase + g_first) / 2u;
      const bool in_texel = TEXELS && NS <= 8u && 4u % (NS / 2u) == 0u;
      const uvec4 tw = in_texel ? texel_words(scale_texels, w0, NS / 2u) : uvec4(0u);
      for (uint k = 0u; k < NS / 2u; ++k) {
        const uint word = in_texel ? tw[k] : scale[w0 + k];
        scale_bits[2u * k] = word & 0xffffu;
        scale_bits[2u * k + 1u] = word >> 16u;
      }
    } else {
      for (uint k = 0u; k < NS; ++k) scale_bits[k] = LOAD_BITS(scale, sbase + g_first + k, sbits);
    }
  }
#ifdef KVBENCH_F16_PRODUCT
  // The decode kernel on a device with f16 rounding to nearest even (quant_f16.glsl): two
  // codes to f16 by bits and one f16 multiply per pair are PMX's S(q * s) exactly, where the
  // lane's scales are finite normal f16s (the product is then 0 or normal); otherwise the
  // f32 code below.
  if (SCALE_F16 && (groups_in_lane || lane_in_group)) {
    float16_t sh[NS];
    bool normal = true;
    for (uint k = 0u; k < NS; ++k) {
      const uint e = scale_bits[k] & 0x7c00u;
      normal = normal && e != 0u && e != 0x7c00u;
      sh[k] = unpackFloat2x16(scale_bits[k]).x;
    }
    if (normal) {
      for (uint k = 0u; k < WORDS; ++k) {
        const uint biased = biased_codes(w[k], CACHE_BITS);
        for (uint e = 0u; e < PER_WORD / 2u; ++e) {
          const uint j0 = k * PER_WORD + e, j1 = j0 + PER_WORD / 2u;
          const f16vec2 s2 = f16vec2(sh[groups_in_lane ? j0 / QG : 0u], sh[groups_in_lane ? j1 / QG : 0u]);
          precise f16vec2 x = code_pair_f16(biased, e, CACHE_BITS) * s2;
          row[j0] = float(x.x);
          row[j1] = float(x.y);
        }
      }
      return;
    }
  }
#endif
  for (uint j = 0u; j < DPL; ++j) {
    const float s = scale_value((groups_in_lane || lane_in_group)
                                    ? scale_bits[groups_in_lane ? j / QG : 0u]
                                    : LOAD_BITS(scale, sbase + (lane * DPL + j) / QG, sbits));
    const float q = code_float(biased_codes(w[j / PER_WORD], CACHE_BITS), j % PER_WORD, CACHE_BITS);
    // PMX dequantizes into T1 through the scale dtype: T1(S(q * s)). The product is exact
    // in f32 for an f16 scale and rounded once by the multiply for an f32 scale; T1 and S
    // are f16 or f32, so at most one f16 rounding remains.
    const float x = q * s;
    row[j] = SCALE_F16 ? round_f16_product(x) : pc.t1_dtype == DT_F16 ? round_f16_fast(x) : x;
  }
}


Batch batch_info(uint b) {
  Batch bt;
  bt.b = b;
  bt.seq0 = uint(LOAD_I64(seqstarts, b));
  bt.seqlen = uint(LOAD_I64(seqstarts, b + 1u)) - bt.seq0;
  bt.kv0 = uint(LOAD_I64(kvstarts, b));
  bt.kvlen = uint(LOAD_I64(kvstarts, b + 1u)) - bt.kv0;
  bt.offset = bt.kvlen - bt.seqlen;
  const bool causal = pc.is_causal != 0u && bt.seqlen > 1u && b >= pc.decoding_batches;
  bt.limited = causal || pc.is_alibi != 0u;
  return bt;
}

uint kv_length(Batch bt) { return bt.kvlen; }

int last_key(Batch bt, uint row) {
  return int(bt.limited ? min(bt.kvlen - 1u, row + bt.offset) : bt.kvlen - 1u);
}

// The query pre-scaled by 1/sqrt(D).
float query_at(Batch bt, uint row, uint head, uint d) {
  const uint i = ((bt.seq0 + row) * pc.num_heads + head) * D + d;
  return decode_float(LOAD_BITS(query, i, dtype_bits(pc.t1_dtype)), pc.t1_dtype) * (1.0 / sqrt(float(D)));
}

// Entry i of cachestarts (i64; its low word).
uint cache_start(uint i) { return TEXELS ? texel_words(cachestarts_texels, 2u * i, 2u).x : uint(LOAD_I64(cachestarts, i)); }

// The cache row of key t (.x): cachestarts[b] + t, or through the page table, read for
// every key: remembering the page read last costs lavapipe a branch per key, which
// measured slower than the load (it is in cache).
uvec2 key_handle(Batch bt, uint t) {
  if (PAGE_SIZE == 0u) return uvec2(cache_start(bt.b) + t, 0u);
  return uvec2(cache_start(bt.b * pc.max_pages + t / PAGE_SIZE) + t % PAGE_SIZE, 0u);
}

// Scale groups per row: from the constants, where a run-time D / quant_group would be an
// integer division per row; the lanes kernel's QG need not be the group (see QG).
#ifdef KVBENCH_TILES
uint scale_groups() { return CACHE_BITS < 16u ? D / QG : 1u; }
#else
uint scale_groups() { return CACHE_BITS < 16u ? pc.scale_groups : 1u; }
#endif

void load_key(Batch bt, uint hk, uvec2 T, uint lane, out float k[DPL]) {
  load_row(mhca_row(T.x, 0u, hk, D), mhca_row(T.x, 0u, hk, scale_groups()), lane, k);
}

void load_value(Batch bt, uint hk, uvec2 T, uint lane, out float v[DPL]) {
  load_row(mhca_row(T.x, 1u, hk, D), mhca_row(T.x, 1u, hk, scale_groups()), lane, v);
}

// The query is pre-scaled by 1/sqrt(D); add PMX's ALiBi mask and attn_mask, each in T1.
float score(Batch bt, uint row, uint head, uint t, float s) {
  if (!SCORE_ADDS) return s;
  float add = 0.0;
  bool has_add = false;
  if (pc.is_alibi != 0u) {
    // PMX builds the ALiBi mask in T1: T1(slope_T1 * T1(distance)).
    const float distance = round_to(float(int(t) - int(bt.offset) - int(row)), pc.t1_dtype);
    add = round_to(slopes[head] * distance, pc.t1_dtype);
    has_add = true;
  }
  if (pc.mask_rank != 0u) {
    const uint n = bt.seq0 + row;
    const uint mrow = pc.mask_rank == 3u ? head * pc.total_rows + n : n;
    const float mv = decode_float(LOAD_BITS(attn_mask, mrow * pc.mask_cols + bt.kv0 + t, dtype_bits(pc.t1_dtype)), pc.t1_dtype);
    add = has_add ? round_to(add + mv, pc.t1_dtype) : mv;  // the ALiBi mask + attn_mask, in T1
  }
  return s + add;
}

