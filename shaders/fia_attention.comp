#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_arithmetic : require  // the decode body (attention_decode.glsl)
// aclnn.FusedInferAttentionScoreV3: the hooks of the shared attention_core.glsl for every
// layout (strides), sparse mode (a per-batch band lo <= j - i <= hi computed on the host),
// mask shape and dtype (bytes, 1 = masked), pse, and both page-attention caches. Q/K head
// size D is specialization constant 0, V's Dv constant 1 (specs/fused_infer_attention_score.md).
#include "divide.glsl"
#include "quant.glsl"
#include "hif8.glsl"
#include "texels.glsl"

layout(constant_id = 1) const uint FIA_DV = 128u;
// Specialization constant 2, how K and V are read (kv_path in fia_vulkan.cpp; lavapipe
// runs both sides of every run-time branch, so only a constant removes the general path's
// per-element loads from this kernel):
//   0 float K/V (f32, f16, bf16: no antiquant) element by element, MLA's rope, a shared
//     prefix and the NZ cache included (the general path of float rows);
//   1 plain f32/f16/bf16 rows (no antiquant, rope or shared prefix) whose every slice is
//     whole, aligned uvec4s;
//   2, 3 int8 or int4 antiquant codes (no rope or shared prefix) whose every slice is whole
//     32-bit words, read a word at a time; the scale and offset once per slice, or, per
//     channel (constants 4 for K, 5 for V), as 16-bit pairs; constant 6: offsets given;
//   4 FP8 E4M3FN antiquant codes, read as path 2 reads int8 ones (four codes a word);
//   6 HiF8 antiquant codes (hif8.glsl), read as path 4 reads FP8 ones;
//   5 antiquant codes element by element, in every mode (the general path of codes: FP4,
//     rope, a shared prefix, NZ, slices not of whole words). Apart from 0, so that a float
//     pipeline carries no code decode and no scale or offset loads per element (MLA's
//     pipelines compiled in a third of the time: specs/fused_infer_attention_score.md).
layout(constant_id = 2) const uint KV_PATH = 0u;
const bool PLAIN_KV = KV_PATH == 1u;
const bool CODES_KV = (KV_PATH >= 2u && KV_PATH <= 4u) || KV_PATH == 6u;
const bool ELEMENT_CODES = KV_PATH == 5u;
layout(constant_id = 4) const bool K_PER_CHANNEL = false;
layout(constant_id = 5) const bool V_PER_CHANNEL = false;
layout(constant_id = 6) const bool HAS_OFFSET = false;
// Specialization constant 7: every K/V row of the codes paths starts on 16 bytes, so a
// slice of whole uvec4s is read 16 bytes a load (codes_rows_in_uvec4s on the host).
layout(constant_id = 7) const bool CODES_UVEC4 = false;
// Specialization constant 8: the uvec4 loads of K/V rows (plain rows, codes by uvec4s) and
// the block table go through the `_texels` views, one gather each on lavapipe instead of a
// loop over the lanes (shaders/texels.glsl); set when the views cover their tensors.
layout(constant_id = 8) const bool TEXELS = false;
// Specialization constant 9: whether score() reads attenMask or pseShift at all. A run-time
// `if` on has_mask / has_pse still costs lavapipe its load as masked code for every key
// (the load's loop over the lanes): 29 -> 21 ms for the 8k decode without either, measured.
layout(constant_id = 9) const bool SCORE_LOADS = true;
// Specialization constant 3: channels [0, DQK) of q and k come from query and key, the
// rest (MLA) from queryRope and keyRope. A constant, so that a kernel without rope has no
// second load per element: each is a gather, and lavapipe compiles both sides of a branch.
layout(constant_id = 3) const uint DQK = 128u;
#define DV FIA_DV
// MLA (DQK < D): the lanes kernel gives each lane every LANES-th dim of Q and K, so that
// whether a dim comes from queryRope/keyRope is known per unrolled element (key_dim). The
// word loaders (paths 1-4) need consecutive slices: the host takes them only without rope.
#define ATTENTION_CYCLIC_KEYS (DQK < D)
#define ATTENTION_QUERY_SLICE_AT

layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint num_items, num_heads, num_kv_heads, dtype;
  uint q_sb, q_st, q_sh, k_sb;  // element strides (batch, token, head) of query, key, value
  uint k_st, k_sh, v_sb, v_st;
  uint v_sh, paged, block_size, max_blocks;
  uint bnnbsd, has_mask, ifa, mask_sb;
  uint mask_row, has_pse, pse_sb, pse_sh;
  uint pse_row, kv_quant, kv_dtype, k_mode;  // kv_quant: K/V are i8/s4 codes (antiquant)
  uint v_mode, per_tensor, has_offset, ks_dtype;
  uint vs_dtype, kv_tokens, q_rows;  // q_rows: S1 (rows wrap around a batch's, see FiaParams::query_row), 0 for TND
  uint prefix_len, p_st, p_sh, pv_st;  // shared prefix: its first prefix_len tokens come before every batch's keys
  uint pv_sh, qr_sb, qr_st;  // MLA: queryRope/keyRope strides
  uint qr_sh, kr_sb, kr_st, kr_sh;
  uint ks_base, vs_base;  // the legacy combined antiquantScale: the value's scales start at vs_base
  uint nz;  // MLA's NZ cache (blocks, Nkv, dim / 16, blockSize, 16)
  uint pse_dtype;  // f16 with an INT8 query, else the query's
  uint kv_list;    // tensorlist K/V, one buffer of key.0, key.1, ...: 1 BSND/BSH elements, 2 BNSD; 0 none
  float scale;
  float quant_scale1;  // full int8: P's codes are round(p * quant_scale1); 0 otherwise
  uint block_magic;    // division_magic(block_size): slot() divides without a division (divide.glsl)
  uint block_shift;    // bits of a row in a block: a key handle's slot word is block << block_shift | row
} pc;

struct Batch {
  uint b, s1, s2, q0, kv0;  // query rows, keys, first query token, first key token
  int lo, hi;               // the band: key j of row i is visible when lo <= j - i <= hi
  uint kvl;                 // tensorlist: the tokens of key.0 .. key.(b-1) before key.b
};
// Full int8 quantizes P before P.V (the kernel core's ATTENTION_PV_WEIGHT hook).
float pv_weight(float p);
#define ATTENTION_PV_WEIGHT(p) pv_weight(p)
#define ATTENTION_ITEM_BEGIN  // per-channel antiquant scales, once per item (lanes and decode kernels)
#include "attention_core.glsl"

layout(std430, binding = 0) readonly buffer Query { uint query[]; };
layout(std430, binding = 1) readonly buffer Key { uint key[]; };
layout(std430, binding = 2) readonly buffer Value { uint value[]; };
layout(std430, binding = 1) readonly buffer Key4 { uvec4 key4[]; };  // the same K and V, 16 bytes a load
layout(std430, binding = 2) readonly buffer Value4 { uvec4 value4[]; };
layout(std430, binding = 3) readonly buffer PseShift { uint pseShift[]; };
layout(std430, binding = 4) readonly buffer AttenMask { uint attenMask[]; };
layout(std430, binding = 5) readonly buffer BlockTable { uint blockTable[]; };
layout(std430, binding = 6) readonly buffer Batches { int batches[]; };
layout(std430, binding = 7) readonly buffer KeyAntiquantScale { uint keyAntiquantScale[]; };
layout(std430, binding = 8) readonly buffer KeyAntiquantOffset { uint keyAntiquantOffset[]; };
layout(std430, binding = 9) readonly buffer ValueAntiquantScale { uint valueAntiquantScale[]; };
layout(std430, binding = 10) readonly buffer ValueAntiquantOffset { uint valueAntiquantOffset[]; };
layout(std430, binding = 11) readonly buffer KeySharedPrefix { uint keySharedPrefix[]; };
layout(std430, binding = 12) readonly buffer ValueSharedPrefix { uint valueSharedPrefix[]; };
layout(std430, binding = 13) readonly buffer QueryRope { uint queryRope[]; };
layout(std430, binding = 14) readonly buffer KeyRope { uint keyRope[]; };
layout(binding = 15) uniform usamplerBuffer key_texels;  // K, V and the block table again, as uvec4 texels
layout(binding = 16) uniform usamplerBuffer value_texels;
layout(binding = 17) uniform usamplerBuffer blockTable_texels;

Batch batch_info(uint b) {
  const uint o = 8u * b;
  return Batch(uint(batches[o]), uint(batches[o + 1u]), uint(batches[o + 2u]), uint(batches[o + 3u]),
               uint(batches[o + 4u]), batches[o + 5u], batches[o + 6u], uint(batches[o + 7u]));
}

uint kv_length(Batch bt) { return bt.s2; }

int last_key(Batch bt, uint row) { return row >= bt.s1 ? -1 : min(int(bt.s2) - 1, int(row) + bt.hi); }

// Element d of a query vector, from queryRope when `rope` (d >= DQK).
float query_element(Batch bt, uint row, uint head, uint d, bool rope) {
  const uint qrow = pc.q_rows == 0u ? bt.q0 + row : (bt.q0 + row) % pc.q_rows;
  if (rope) {
    const uint r = bt.b * pc.qr_sb + qrow * pc.qr_st + head * pc.qr_sh + d - DQK;
    return decode_float(LOAD_BITS(queryRope, r, dtype_bits(pc.dtype)), pc.dtype);
  }
  const uint i = bt.b * pc.q_sb + qrow * pc.q_st + head * pc.q_sh + d;
  const uint bits = LOAD_BITS(query, i, dtype_bits(pc.dtype));
  return pc.dtype == DT_I8 ? float(sign_extend(bits, 8u)) : decode_float(bits, pc.dtype);  // full int8: the code
}
// `DQK < D` first: a constant test, so that a kernel without rope has no second load.
float query_at(Batch bt, uint row, uint head, uint d) { return query_element(bt, row, head, d, DQK < D && d >= DQK); }
float query_slice_at(Batch bt, uint row, uint head, uint slice, uint j) {
  return query_element(bt, row, head, key_dim(slice, j), DQK < D && key_dim_from(slice, j, DQK));
}

// Full int8: P as its int8 code, AscendQuant(p, quantScale1, 0) half to even, saturated (p > 0).
float pv_weight(float p) { return pc.quant_scale1 > 0.0 ? min(round_half_even(p * pc.quant_scale1), 127.0) : p; }

// Where key token t of batch b lives: the block and row of its page-attention slot.
uvec2 slot(uint b, uint t) {
  const uvec2 blk = divide_by_magic(t, pc.block_size, pc.block_magic);  // t / block_size, t % block_size
  const uint i = b * pc.max_blocks + blk.x;
  return uvec2(TEXELS ? texel_words(blockTable_texels, i, 1u).x : blockTable[i], blk.y);
}

// A key's handle: its logical token, and with page attention its slot (block << block_shift
// | row), looked up once for all the key's K and V loads (page attention has no shared
// prefix, so the token is the cache's). The host checks that every block fits.
uvec2 key_handle(Batch bt, uint t) {
  if (pc.paged == 0u) return uvec2(t, 0u);
  const uvec2 s = slot(bt.b, t);
  return uvec2(t, (s.x << pc.block_shift) | s.y);
}
uvec2 handle_slot(uint word) { return uvec2(word >> pc.block_shift, word & ((1u << pc.block_shift) - 1u)); }

// Where the K or V rows (head size dim, strides sb, st, sh) of kv head hk lie: with page
// attention the row of a key in slot (block, row) is block * cu + row * cv + c0, otherwise
// token * cv + c0 (row_at): one form for every layout, whose coefficients the lanes kernel
// computes once per item (k_rows, v_rows), where a branch per layout in the key loop cost
// lavapipe every layout's arithmetic for every key (it runs every side of a branch).
struct RowMap {
  uint cu, cv, c0;
};
RowMap row_map(Batch bt, uint hk, uint dim, uint sb, uint st, uint sh) {
  const bool list = pc.kv_list != 0u, nz = pc.nz != 0u, bnnbsd = pc.bnnbsd != 0u;
  const uint nkv = pc.num_kv_heads, bs = pc.block_size;
  if (pc.paged != 0u) {
    // NZ (blocks, Nkv, dim / 16, blockSize, 16), channel 0 of the row; (blocks, Nkv,
    // blockSize, dim); (blocks, blockSize, Nkv * dim).
    const uint cu = nz ? nkv * (dim / 16u) * bs * 16u : nkv * bs * dim;
    const uint ch = nz ? (dim / 16u) * bs * 16u : bnnbsd ? bs * dim : dim;
    return RowMap(cu, nz ? 16u : bnnbsd ? dim : nkv * dim, hk * ch);
  }
  // key.b: (1, S2b, Nkv * dim) or (1, Nkv, S2b, dim), after the kvl tokens of the elements
  // before it; or the strided tensor from token kv0 of batch b.
  const uint list_cv = pc.kv_list == 2u ? dim : nkv * dim, list_ch = pc.kv_list == 2u ? bt.s2 * dim : dim;
  return RowMap(0u, list ? list_cv : st,
                list ? bt.kvl * nkv * dim + hk * list_ch : bt.b * sb + bt.kv0 * st + hk * sh);
}
uint row_at(RowMap r, uint t, uint slot_word) {
  const uvec2 s = handle_slot(slot_word);
  return (pc.paged != 0u ? s.x * r.cu + s.y * r.cv : t * r.cv) + r.c0;
}

// First element of the K or V row of kv head hk at token t (dims contiguous after it), in
// slot `slot_word` of a key handle with page attention.
uint row_base(Batch bt, uint hk, uint t, uint slot_word, uint dim, uint sb, uint st, uint sh) {
#ifdef KVBENCH_TILES
  // The same layouts as row_map's, by branches: a GPU takes uniform branches for free, and
  // the map's coefficients, live across the key loop, cost the decode kernel registers (2
  // VGPRs spilled on gfx1100 at FIA int8 per-channel NV 8, 2 SGPRs on vega10: attention_isa_stats).
  const uint nkv = pc.num_kv_heads, bs = pc.block_size;
  if (pc.kv_list != 0u) return bt.kvl * nkv * dim + (pc.kv_list == 2u ? (hk * bt.s2 + t) * dim : (t * nkv + hk) * dim);
  if (pc.paged == 0u) return bt.b * sb + (bt.kv0 + t) * st + hk * sh;
  const uvec2 s = handle_slot(slot_word);
  if (pc.nz != 0u) return ((s.x * nkv + hk) * (dim / 16u) * bs + s.y) * 16u;  // channel 0 of the NZ row
  if (pc.bnnbsd == 0u) return ((s.x * bs + s.y) * nkv + hk) * dim;  // (blocks, blockSize, Nkv * dim)
  return ((s.x * nkv + hk) * bs + s.y) * dim;                     // (blocks, Nkv, blockSize, dim)
#else
  return row_at(row_map(bt, hk, dim, sb, st, sh), t, slot_word);
#endif
}

// The lanes kernel's K and V row maps of the item's kv head (head sizes D and DV), made once
// per item by item_begin: the 8k paged decode 12.1-12.3 ms with a branch per layout, 11.6-12.3
// with the map's selects in the key loop (LLVM did not hoist them), 10.7-10.8 with these
// (specs/attention-issue-35.md section 7). The GPU kernels branch (row_base).
RowMap k_rows, v_rows;
uint key_row_first(Batch bt, uint hk, uint t, uint slot_word) {
#ifdef KVBENCH_TILES
  return row_base(bt, hk, t, slot_word, D, pc.k_sb, pc.k_st, pc.k_sh);
#else
  return row_at(k_rows, t, slot_word);
#endif
}
uint value_row_first(Batch bt, uint hk, uint t, uint slot_word) {
#ifdef KVBENCH_TILES
  return row_base(bt, hk, t, slot_word, DV, pc.v_sb, pc.v_st, pc.v_sh);
#else
  return row_at(v_rows, t, slot_word);
#endif
}

// Channel d of a row from row_base(): contiguous, or in the NZ cache the fractal d / 16,
// blockSize lines of 16 channels further on per fractal.
uint kv_offset(uint d) { return pc.nz != 0u ? (d >> 4u) * (pc.block_size << 4u) + (d & 15u) : d; }

// N plain float elements (f32, f16, bf16) of a K or V row from element `first` on, by
// uvec4 loads (through the texel view with TEXELS): lavapipe pays per load, not per byte,
// so this is 4-8x fewer loads than one word per element. Used when PLAIN_KV is set: the host
// (plain_kv in fia_vulkan.cpp) has checked that every slice is whole, aligned uvec4s. GLSL
// cannot pass a buffer to a function, hence one loader per buffer.
#define DEFINE_ROW_LOADER(NAME, BUF4, TEX, N)                                                     \
  void NAME(uint first, uint dt, out float x[N]) {                                                \
    if (dtype_bits(dt) == 16u) {                                                                  \
      for (uint i = 0u; i < N / 8u; ++i) {                                                        \
        const uvec4 u = TEXELS ? texel_words(TEX, first / 2u + 4u * i, 4u) : BUF4[first / 8u + i]; \
        x[8u * i] = decode_float(u.x & 0xffffu, dt);                                              \
        x[8u * i + 1u] = decode_float(u.x >> 16u, dt);                                            \
        x[8u * i + 2u] = decode_float(u.y & 0xffffu, dt);                                         \
        x[8u * i + 3u] = decode_float(u.y >> 16u, dt);                                            \
        x[8u * i + 4u] = decode_float(u.z & 0xffffu, dt);                                         \
        x[8u * i + 5u] = decode_float(u.z >> 16u, dt);                                            \
        x[8u * i + 6u] = decode_float(u.w & 0xffffu, dt);                                         \
        x[8u * i + 7u] = decode_float(u.w >> 16u, dt);                                            \
      }                                                                                           \
    } else {                                                                                      \
      for (uint i = 0u; i < N / 4u; ++i) {                                                        \
        const uvec4 u = TEXELS ? texel_words(TEX, first + 4u * i, 4u) : BUF4[first / 4u + i];   \
        x[4u * i] = uintBitsToFloat(u.x);                                                         \
        x[4u * i + 1u] = uintBitsToFloat(u.y);                                                    \
        x[4u * i + 2u] = uintBitsToFloat(u.z);                                                    \
        x[4u * i + 3u] = uintBitsToFloat(u.w);                                                    \
      }                                                                                           \
    }                                                                                             \
  }
DEFINE_ROW_LOADER(key_row, key4, key_texels, DPL)
DEFINE_ROW_LOADER(value_row, value4, value_texels, DPLV)

// N antiquantized elements of a K or V row from code `first` on (KV_PATH 2, 3, 4, 6): whole
// words of codes, by uvec4s where the rows allow it (CODES_UVEC4) and N fills whole ones;
// scale and offset element `si`, the same for the slice, or per channel (PER_CHANNEL:
// elements si.., 16-bit, two a word, si even). The caller checks the alignment on the host.
#define DEFINE_CHANNEL_LOADER(NAME, SCALES, OFFSETS, N)                                    \
  void NAME(uint si, uint sdt, out float sc[N], out float of[N]) {                         \
    for (uint k = 0u; k < N / 2u; ++k) {                                                   \
      const uint ws = SCALES[si / 2u + k], wo = HAS_OFFSET ? OFFSETS[si / 2u + k] : 0u;    \
      sc[2u * k] = decode_float(ws & 0xffffu, sdt);                                        \
      sc[2u * k + 1u] = decode_float(ws >> 16u, sdt);                                      \
      of[2u * k] = HAS_OFFSET ? decode_float(wo & 0xffffu, sdt) : 0.0;                    \
      of[2u * k + 1u] = HAS_OFFSET ? decode_float(wo >> 16u, sdt) : 0.0;                   \
    }                                                                                      \
  }
DEFINE_CHANNEL_LOADER(key_channels, keyAntiquantScale, keyAntiquantOffset, DPL)
DEFINE_CHANNEL_LOADER(value_channels, valueAntiquantScale, valueAntiquantOffset, DPLV)

// Per-channel scales and offsets that stay in registers for the whole item, loaded once by
// item_begin (they depend on the kv head and the channel only): the lanes kernel's K and V
// slices, and the decode kernel's V slice when each lane always takes the same one (one V
// slice per lane: CPL 1) and registers allow (NV <= 4). Its K loop walks every slice of a
// row, with the same address in every lane (a uniform load); the tiles kernel's slices
// change with every call.
float k_chan_sc[DPL], k_chan_of[DPL], v_chan_sc[DPLV], v_chan_of[DPLV];
#if !defined(KVBENCH_TILES)
const bool K_CHANNELS_CACHED = true, V_CHANNELS_CACHED = true;
#elif defined(KVBENCH_DECODE)
// At 8 vectors the 16 more registers spilled on RDNA3 (gfx1100, wave64: 13 VGPRs): from 5 on,
// each V slice loads its scales again (attention_isa_stats, specs/attention-issue-35.md).
const bool K_CHANNELS_CACHED = false, V_CHANNELS_CACHED = CPL == 1u && NV <= 4u;
#else
const bool K_CHANNELS_CACHED = false, V_CHANNELS_CACHED = false;
#endif

#define DEFINE_CODE_LOADER(NAME, CODES, SCALES, OFFSETS, N, PER_CHANNEL, CHANNELS, CSC, COF, CACHED) \
  void NAME(uint first, uint si, uint sdt, out float x[N]) {                              \
    const uint bits = KV_PATH == 3u ? 4u : 8u, per_word = 32u / bits;                     \
    float sc[N], of[N];                                                                    \
    if (PER_CHANNEL && CACHED) {                                                           \
      for (uint j = 0u; j < N; ++j) {                                                      \
        sc[j] = CSC[j];                                                                    \
        of[j] = COF[j];                                                                    \
      }                                                                                    \
    } else if (PER_CHANNEL) {                                                              \
      CHANNELS(si, sdt, sc, of);                                                           \
    } else {                                                                               \
      const uint sb = dtype_bits(sdt);                                                     \
      const float s1 = decode_float(LOAD_BITS(SCALES, si, sb), sdt);                       \
      const float o1 = HAS_OFFSET ? decode_float(LOAD_BITS(OFFSETS, si, sb), sdt) : 0.0;   \
      for (uint j = 0u; j < N; ++j) {                                                      \
        sc[j] = s1;                                                                        \
        of[j] = o1;                                                                        \
      }                                                                                    \
    }                                                                                      \
    uint words[N / per_word + 1u]; /* + 1: never a 0-length array (KV_PATH 0 or 1 builds) */\
    if (CODES_UVEC4 && (N / per_word) % 4u == 0u) {                                        \
      for (uint k = 0u; k < N / per_word / 4u; ++k) {                                      \
        const uvec4 u = TEXELS ? texel_words(CODES##_texels, first / per_word + 4u * k, 4u)    \
                               : CODES##4[first / per_word / 4u + k];                      \
        words[4u * k] = u.x; words[4u * k + 1u] = u.y; words[4u * k + 2u] = u.z; words[4u * k + 3u] = u.w; \
      }                                                                                    \
    } else {                                                                               \
      for (uint k = 0u; k < N / per_word; ++k) words[k] = CODES[first / per_word + k];     \
    }                                                                                      \
    for (uint k = 0u; k < N / per_word; ++k) {                                             \
      const uint biased = biased_codes(words[k], bits);                                   \
      for (uint e = 0u; e < per_word; ++e) {                                               \
        const float code = KV_PATH == 4u ? fp8_code_float(words[k], e)                      \
                         : KV_PATH == 6u ? hif8_to_float((words[k] >> (8u * e)) & 0xffu)   \
                                         : code_float(biased, e, bits);                    \
        x[k * per_word + e] = antiquant_value(code, of[k * per_word + e], sc[k * per_word + e]); \
      }                                                                                    \
    }                                                                                      \
  }

// The antiquant scale/offset element of (token t, kv head hk, dim d) in `mode` (spec).
uint antiquant_index(uint mode, uint dim, Batch bt, uint t, uint slot_word, uint hk, uint d) {
  if (mode == 0u) return pc.per_tensor != 0u ? 0u : hk * dim + d;
  if (mode == 1u) return bt.b * pc.kv_tokens + bt.kv0 + t;  // the padded tensor's key position
  if (mode == 2u) return hk;
  if (mode == 3u) return (bt.b * pc.num_kv_heads + hk) * pc.kv_tokens + bt.kv0 + t;
  if (mode == 6u) return ((bt.b * pc.num_kv_heads + hk) * pc.kv_tokens + bt.kv0 + t) * (dim / 32u) + d / 32u;  // per-token-group
  const uvec2 s = handle_slot(slot_word);
  return mode == 4u ? s.x * pc.block_size + s.y : (s.x * pc.num_kv_heads + hk) * pc.block_size + s.y;
}

// f32(f32(code + offset) * scale), Ascend's antiquant (ref/quant.hpp dequant_offset), of a
// code already a float (code_float, code_value).
float antiquant_value(float code, float offset, float s) { precise float r = (code + offset) * s; return r; }

// Whether K/V hold FP4 codes (the per-token-group mode's, with E8M0 scales).
bool kv_fp4() { return pc.kv_dtype == DT_F4E2M1 || pc.kv_dtype == DT_F4E1M2; }
uint kv_bits() { return kv_fp4() ? 4u : dtype_bits(pc.kv_dtype); }

// A K/V code's value: an integer (int8/int4), an FP8 E4M3FN or HiF8 float, or an FP4 float (sign, exponent, mantissa;
// bias 1, no inf or NaN: E2M1 0 .. 6, E1M2 0 .. 1.75; core/float_format.hpp fp4_value).
float code_value(uint raw) {
  if (pc.kv_dtype == DT_F8E4M3FN) return fp8_to_float(raw, DT_F8E4M3FN);
  if (pc.kv_dtype == DT_HIFLOAT8) return hif8_to_float(raw & 0xffu);
  if (!kv_fp4()) return float(decode_int(raw, pc.kv_dtype));
  const uint mbits = pc.kv_dtype == DT_F4E1M2 ? 2u : 1u;
  const uint e = (raw & 7u) >> mbits, m = raw & ((1u << mbits) - 1u);
  const float frac = float(m) / float(1u << mbits);
  const float mag = e == 0u ? frac : (1.0 + frac) * float(1u << (e - 1u));  // subnormal: m * 2^(1 - bias - mbits)
  return (raw & 8u) != 0u ? -mag : mag;
}

// An antiquant scale or offset element: a float of dtype dt, or FLOAT8_E8M0's 2^(bits - 127)
// (0xFF NaN; 2^-127 is f32's subnormal 0x00400000).
float scale_value(uint bits, uint dt) {
  if (dt != DT_F8E8M0) return decode_float(bits, dt);
  return bits == 255u ? uintBitsToFloat(0x7fc00000u) : bits == 0u ? uintBitsToFloat(0x00400000u) : uintBitsToFloat(bits << 23u);
}

DEFINE_CODE_LOADER(key_codes, key, keyAntiquantScale, keyAntiquantOffset, DPL, K_PER_CHANNEL, key_channels, k_chan_sc, k_chan_of,
                   K_CHANNELS_CACHED)
DEFINE_CODE_LOADER(value_codes, value, valueAntiquantScale, valueAntiquantOffset, DPLV, V_PER_CHANNEL, value_channels,
                   v_chan_sc, v_chan_of, V_CHANNELS_CACHED)

// K's slice `lane` and V's slice `v_lane` (the lanes kernel: the same).
void item_begin(Batch bt, uint hk, uint lane, uint v_lane) {
#ifndef KVBENCH_TILES
  k_rows = row_map(bt, hk, D, pc.k_sb, pc.k_st, pc.k_sh);
  v_rows = row_map(bt, hk, DV, pc.v_sb, pc.v_st, pc.v_sh);
#endif
  // Mode 0 per channel (the only per-channel codes path): element hk * dim + d, any token.
  if (CODES_KV && K_PER_CHANNEL && K_CHANNELS_CACHED)
    key_channels(pc.ks_base + antiquant_index(pc.k_mode, D, bt, 0u, 0u, hk, lane * DPL), pc.ks_dtype, k_chan_sc, k_chan_of);
  if (CODES_KV && V_PER_CHANNEL && V_CHANNELS_CACHED)
    value_channels(pc.vs_base + antiquant_index(pc.v_mode, DV, bt, 0u, 0u, hk, v_lane * DPLV), pc.vs_dtype, v_chan_sc,
                   v_chan_of);
}

void load_key(Batch bt, uint hk, uvec2 handle, uint lane, out float k[DPL]) {
  uint t = handle.x;
  const uint sw = handle.y;
  if (PLAIN_KV) {
    key_row(key_row_first(bt, hk, t, sw) + lane * DPL, pc.kv_dtype, k);
    return;
  }
  if (CODES_KV) {
    key_codes(key_row_first(bt, hk, t, sw) + lane * DPL,
              pc.ks_base + antiquant_index(pc.k_mode, D, bt, t, sw, hk, lane * DPL), pc.ks_dtype, k);
    return;
  }
  const uint bits = ELEMENT_CODES ? kv_bits() : dtype_bits(pc.kv_dtype);
  if (t < pc.prefix_len) {  // the shared prefix (never antiquantized)
    const uint base = t * pc.p_st + hk * pc.p_sh;
    for (uint j = 0u; j < DPL; ++j)
      k[j] = decode_float(LOAD_BITS(keySharedPrefix, base + key_dim(lane, j), bits), pc.kv_dtype);
    return;
  }
  t -= pc.prefix_len;
  const uint base = row_base(bt, hk, t, sw, DQK, pc.k_sb, pc.k_st, pc.k_sh);
  const uint rope_base = row_base(bt, hk, t, sw, D - DQK, pc.kr_sb, pc.kr_st, pc.kr_sh);
  for (uint j = 0u; j < DPL; ++j) {
    const uint d = key_dim(lane, j);
    if (DQK < D && key_dim_from(lane, j, DQK)) {  // MLA: keyRope continues the contraction
      k[j] = decode_float(LOAD_BITS(keyRope, rope_base + kv_offset(d - DQK), bits), pc.kv_dtype);
      continue;
    }
    const uint raw = LOAD_BITS(key, base + kv_offset(d), bits);
    if (!ELEMENT_CODES) {
      k[j] = decode_float(raw, pc.kv_dtype);
      continue;
    }
    const uint si = pc.ks_base + antiquant_index(pc.k_mode, DQK, bt, t, sw, hk, d);
    const uint sbits = dtype_bits(pc.ks_dtype);
    const float off = pc.has_offset != 0u ? decode_float(LOAD_BITS(keyAntiquantOffset, si, sbits), pc.ks_dtype) : 0.0;
    k[j] = antiquant_value(code_value(raw), off, scale_value(LOAD_BITS(keyAntiquantScale, si, sbits), pc.ks_dtype));
  }
}

void load_value(Batch bt, uint hk, uvec2 handle, uint lane, out float v[DPLV]) {
  uint t = handle.x;
  const uint sw = handle.y;
  if (PLAIN_KV) {
    value_row(value_row_first(bt, hk, t, sw) + lane * DPLV, pc.kv_dtype, v);
    return;
  }
  if (CODES_KV) {
    value_codes(value_row_first(bt, hk, t, sw) + lane * DPLV,
                pc.vs_base + antiquant_index(pc.v_mode, DV, bt, t, sw, hk, lane * DPLV), pc.vs_dtype, v);
    return;
  }
  const uint bits = ELEMENT_CODES ? kv_bits() : dtype_bits(pc.kv_dtype);
  if (t < pc.prefix_len) {
    const uint base = t * pc.pv_st + hk * pc.pv_sh + lane * DPLV;
    for (uint j = 0u; j < DPLV; ++j) v[j] = decode_float(LOAD_BITS(valueSharedPrefix, base + j, bits), pc.kv_dtype);
    return;
  }
  t -= pc.prefix_len;
  const uint base = value_row_first(bt, hk, t, sw);
  for (uint j = 0u; j < DPLV; ++j) {
    const uint raw = LOAD_BITS(value, base + kv_offset(lane * DPLV + j), bits);
    if (!ELEMENT_CODES) {
      v[j] = decode_float(raw, pc.kv_dtype);
      continue;
    }
    const uint si = pc.vs_base + antiquant_index(pc.v_mode, DV, bt, t, sw, hk, lane * DPLV + j);
    const uint sbits = dtype_bits(pc.vs_dtype);
    const float off = pc.has_offset != 0u ? decode_float(LOAD_BITS(valueAntiquantOffset, si, sbits), pc.vs_dtype) : 0.0;
    v[j] = antiquant_value(code_value(raw), off, scale_value(LOAD_BITS(valueAntiquantScale, si, sbits), pc.vs_dtype));
  }
}

// scale * q.k + pse, or -inf outside the band or where the mask holds 1.
float score(Batch bt, uint row, uint head, uint t, float dot) {
  const int rel = int(t) - int(row);
  if (rel < bt.lo || rel > bt.hi) return uintBitsToFloat(0xff800000u);
  if (SCORE_LOADS && pc.has_mask != 0u) {
    const uint mi = bt.b * pc.mask_sb + (pc.ifa != 0u ? 0u : (bt.q0 + row) * pc.mask_row) + bt.kv0 + t;
    if (LOAD_BITS(attenMask, mi, 8u) != 0u) return uintBitsToFloat(0xff800000u);
  }
  float s = dot * pc.scale;
  if (SCORE_LOADS && pc.has_pse != 0u) {
    const uint pi = bt.b * pc.pse_sb + head * pc.pse_sh + (bt.q0 + row) * pc.pse_row + bt.kv0 + t;
    s += decode_float(LOAD_BITS(pseShift, pi, dtype_bits(pc.pse_dtype)), pc.pse_dtype);
  }
  return s;
}
