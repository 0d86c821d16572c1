#pragma once
// aclnn.FusedInferAttentionScoreV3: the declared signature, one parsed case's attributes and
// per-batch geometry, and the index maps of every layout. Semantics:
// specs/fused_infer_attention_score.md.
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/tensor.hpp"
#include "ops/args.hpp"
#include "ops/signature.hpp"

namespace kvbench {

// Element strides of a [batch, token, head, dim] view of a tensor whose dim is innermost.
// Token t of batch b, head h, dim d is at b * batch + t * token + h * head + d (TND-family
// tensors have batch 0: their batches are token offsets).
struct Strides {
  int64_t batch = 0, token = 0, head = 0;
  int64_t at(int64_t b, int64_t t, int64_t h, int64_t d) const {
    return b * batch + t * token + h * head + d;
  }
};

// Physical orders of query/key/value and of the output.
enum class FiaOrder { BSND, BNSD, NBSD, TND, NTD };

// Visible keys of a query row are those with lo <= j - i <= hi (and the mask's 0s).
struct Band {
  int64_t lo = 0, hi = 0;
};
// The band of one batch (S1b query rows, S2b keys) for a sparse mode, from research-derived
// rules (spec "Formulas"). `masked` = attenMask given; `ifa` = Q_S 1 outside TND. Both
// bounds are clamped to [-S1b, S2b], so they fit 32 bits.
Band fia_band(int sparse, int64_t pre, int64_t next, bool masked, bool ifa, int64_t S1b, int64_t S2b);

// KV antiquant (part 2): int8/int4 key and value codes, x = f32(f32(code + offset) * scale).
// Modes (keyAntiquantMode/valueAntiquantMode): 0 per-channel (per-tensor with
// antiquant_per_tensor), 1 per-token, 2 per-tensor + per-head, 3 per-token + per-head,
// 4 per-token in page-attention blocks, 5 per-token + per-head in blocks, 6 per-token-group
// (FP4 codes, one FLOAT8_E8M0 scale per 32 channels of a token row).
struct FiaAntiquant {
  bool on = false;
  DType codes = DType::i8;  // i8, s4 (8 per int32 word, LSB first: kvbench's s4 packing), f4e2m1/f4e1m2 (mode
                            // 6), f8e4m3fn (modes 0, 1, 4: the Ascend 950's FP8 KV), hifloat8
                            // (mode 0: the Ascend 950's HIFLOAT8 KV)
  bool fp4() const { return codes == DType::f4e2m1 || codes == DType::f4e1m2; }
  bool fp8() const { return codes == DType::f8e4m3fn; }
  bool hif8() const { return codes == DType::hifloat8; }
  // The 8-bit float codes (FP8 E4M3FN, HiF8): decoded exactly, times the scale, no offset.
  bool float8() const { return fp8() || hif8(); }
  int key_mode = 0, value_mode = 0;
  bool per_tensor = false, offset = false;
  // The legacy combined antiquantScale/antiquantOffset (index 0 key, 1 value) with
  // antiquantMode 0 (per-channel, or per-tensor) or 1 (per-token), instead of the separate
  // key/value parameters.
  bool combined = false;
  // antiquant_scale_spread: the per-channel sides' channels drawn at magnitudes spread
  // apart (FiaOriginals::channel_factors); 1 = all channels alike.
  double spread = 1;
  // Whether K (side 0) or V (1) has one scale per channel (mode 0, not per-tensor).
  bool per_channel(int side) const { return (side == 0 ? key_mode : value_mode) == 0 && !per_tensor; }
};

// Post-quant int8 output: attentionOut = sat_int8(round(attn * quantScale2 + quantOffset2)).
struct FiaPostQuant {
  bool on = false, per_channel = false, offset = false, ties = false;
  DType dtype = DType::f32;  // of quantScale2/quantOffset2: f32, or bf16 with a bf16 query
};

// Full int8 (全量化): INT8 query, key and value. s = scaleValue * deqScale1 * (q . k) over the
// integer codes; P = exp(s - max) quantized with quantScale1 to int8 codes c; out =
// deqScale2 * (c . v) / sum(exp(s - max)) (spec "Full int8"). The flags say which of the
// per-tensor scales the case file gives (the document's presence rules).
struct FiaFullQuant {
  bool on = false;
  bool deq1 = false, qs1 = false, deq2 = false, qs2 = false;  // deqScale1 ... quantScale2 given
};

struct FiaParams {
  int64_t B = 1, S1 = 1, S2 = 1, N = 1, Nkv = 1, D = 128, Dv = 128;
  std::string layout = "BSH";
  FiaOrder in = FiaOrder::BSND, out = FiaOrder::BSND;
  bool tnd = false;  // TND, NTD_TND, TND_NTD: batches are runs of tokens
  bool bsh = false;  // query/key/value as (B, S, N*D)
  double scale = 1;  // scaleValue as f32
  int64_t pre = 0, next = 0;
  int sparse = 0, inner_precise = 1;
  int64_t block_size = 0, max_blocks = 0, num_blocks = 0;
  bool bnnbsd = false;  // page attention cache (numBlocks, Nkv, blockSize, D)
  // MLA's NZ cache (numBlocks, Nkv, D / 16, blockSize, 16): channel d of a token row lives
  // in the 16-channel fractal d / 16, at d % 16 of the token's 16-element line.
  bool nz = false;
  // Tensorlist key/value (non-contiguous KV): batch b's K and V are key.b and value.b, batch
  // 1 in the key's layout with its own S = S2b tokens.
  bool tensorlist = false;
  bool lse = false;
  std::string mask = "none", pse = "none";
  int64_t mask_pad = 0, pse_pad = 0, masked_rows = 0;
  DType q = DType::f16, mask_dtype = DType::boolean;
  std::vector<int64_t> act_q, act_kv;  // as written (empty: absent)
  // Left padding (queryPaddingSize, kvPaddingSize) as written, -1 when absent.
  int64_t q_pad = -1, kv_pad = -1;
  // Shared prefix: keySharedPrefix/valueSharedPrefix hold S_prefix tokens, of which every
  // batch attends to the first prefix_len before its own keys.
  int64_t S_prefix = 0, prefix_len = 0;
  // MLA: queryRope/keyRope of `rope` (64) channels extend the contraction: q.k + qr.kr.
  int64_t rope = 0;
  bool rope_antiquant_scale = false;  // keyRopeAntiquantScale given (reserved: no effect)
  bool has_prefix() const { return S_prefix > 0; }
  int64_t keys(int64_t b) const { return prefix_len + s2b[b]; }  // the keys batch b attends over
  bool left_padded() const { return q_pad >= 0 || kv_pad >= 0; }
  // Per batch: query rows, keys, first query token and first key token (TND), band.
  std::vector<int64_t> s1b, s2b, q_start, kv_start;
  std::vector<Band> band;
  FiaAntiquant quant;
  FiaPostQuant post;
  FiaFullQuant full;
  // INT8 (post-quant), f16 for full int8 without it, else the query's.
  DType out_dtype() const { return post.on ? DType::i8 : full.on ? DType::f16 : q; }
  // pseShift: f16 with an INT8 query (the document), else the query's dtype.
  DType pse_dtype() const { return full.on ? DType::f16 : q; }
  // quantScale2/quantOffset2: [1], or per channel [N * Dv] for BSH outputs, else [N, Dv].
  Shape post_quant_shape() const;

  bool paged() const { return block_size > 0; }
  bool ifa() const { return !tnd && S1 == 1; }
  bool has_mask() const { return mask != "none"; }
  bool compressed_mask() const { return mask.find("2048") != std::string::npos; }
  // attenMask is read (modes 0/1, or IFA); the compressed mask of modes 2-4 is not.
  bool mask_applies() const { return has_mask() && !compressed_mask(); }
  int64_t T() const { return tnd ? S1 : B * S1; }
  // The mask's and pse's KV_S (the per-token antiquant scales' S): prefix plus keys.
  int64_t kv_tokens() const { return prefix_len + (paged() ? max_blocks * block_size : S2); }

  Shape query_shape() const { return query_shape(D); }
  Shape query_shape(int64_t dim) const;  // queryRope: dim = rope
  Shape kv_shape(int64_t dim) const;     // key (D) or value (Dv), the cache with page attention
  Shape out_shape() const;
  Shape lse_shape() const;
  Shape mask_shape() const;
  Shape pse_shape() const;
  Strides query_strides() const { return query_strides(D); }
  Strides query_strides(int64_t dim) const;
  Strides kv_strides(int64_t dim) const;               // not paged, not a tensorlist
  Shape list_shape(int64_t b, int64_t dim) const;      // key.b (dim D) or value.b (Dv)
  Strides list_strides(int64_t b, int64_t dim) const;  // within key.b / value.b
  Shape prefix_shape(int64_t dim) const;
  Strides prefix_strides(int64_t dim) const;
  // Elements of the mask/pse row and batch strides (0: broadcast over batches).
  int64_t mask_row_stride() const { return mask_shape().back(); }
  int64_t mask_batch_stride() const;
  // pseShift as [batch, row, head, key]: batch stride 0 when broadcast (1, N, S1, S2p).
  Strides pse_strides() const;
  // The physical query row of row i of batch b: q_start + i, and for i >= S1b (rows the
  // operator leaves 0) the rows around the batch's, cyclically (a bijection onto [0, S1)).
  int64_t query_row(int64_t b, int64_t i) const { return tnd ? q_start[b] + i : (q_start[b] + i) % S1; }
  // The output vector (Dv elements) and lse element of query row i of batch b, head h.
  int64_t out_vector(int64_t b, int64_t i, int64_t h) const;
  int64_t lse_index(int64_t b, int64_t i, int64_t h) const;

  // Antiquant scale/offset of one side (mode), its shape and dtype, and the element that
  // serves key token t (logical) of batch b, kv head hk, dim d; `blk`/`r` its cache slot.
  Shape antiquant_shape(int mode, int64_t dim) const;
  Shape combined_antiquant_shape() const;  // antiquantScale: key's and value's, stacked
  DType antiquant_dtype(int mode) const {
    return mode == 0 || mode == 2 ? q : mode == 6 ? DType::f8e8m0 : DType::f32;
  }
  int64_t antiquant_index(int mode, int64_t dim, int64_t b, int64_t t, int64_t hk, int64_t d, int64_t blk,
                          int64_t r) const;
};

// Where the tensors' elements are (fia_inputs.cpp).
// The block ids: a seeded shuffle of all blocks taken by the batches in order; the one
// left over is the spare every unused table entry names. [B * max_blocks].
std::vector<int64_t> fia_block_table(const FiaParams& p, uint64_t seed);
// Element of a page-attention cache (dim = D or Dv).
int64_t fia_cache_index(const FiaParams& p, int64_t blk, int64_t r, int64_t hk, int64_t d, int64_t dim);
// Element of K (dim D) or V (dim Dv) holding key token t of batch b, kv head hk, dim d
// (with a tensorlist, of key.b / value.b).
int64_t fia_kv_index(const FiaParams& p, const std::vector<int64_t>& table, int64_t b, int64_t t, int64_t hk,
                     int64_t d, int64_t dim);

// The declared signature (fia_signature.cpp).
const Signature& fia_signature();
// The case's FiaParams, its attributes checked against the constraints (fia_parse.cpp).
FiaParams parse_fia_params(Args& c);
// The quantized modes' attributes (fia_parse_quant.cpp), called by parse_fia_params in
// this order: KV antiquant, post-quant int8 output, full int8.
void parse_fia_antiquant(Args& c, FiaParams& p);
void parse_fia_post_quant(Args& c, FiaParams& p);
void parse_fia_full_quant(Args& c, FiaParams& p);
// The Atlas A2 limits of `ascend_limits: true` (fia_ascend_limits.cpp): Args::fail at the
// key of the first one the case breaks.
void check_ascend_limits(Args& c, const FiaParams& p);

}  // namespace kvbench
