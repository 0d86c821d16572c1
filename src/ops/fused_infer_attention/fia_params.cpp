// aclnn.FusedInferAttentionScoreV3's geometry: the band of a sparse mode, and FiaParams'
// shapes, strides and index maps of every layout (the signature is in fia_signature.cpp).
#include "ops/fused_infer_attention/fia_params.hpp"

#include <algorithm>

namespace kvbench {

Band fia_band(int sparse, int64_t pre, int64_t next, bool masked, bool ifa, int64_t S1b, int64_t S2b) {
  const int64_t delta = S2b - S1b;
  Band b{-S1b, S2b};  // everything
  if (!ifa) {
    if (sparse == 0 && masked)
      b = {-pre, next};
    else if (sparse == 2)
      b = {-S1b, 0};
    else if (sparse == 3)
      b = {-S1b, delta};
    else if (sparse == 4)
      b = {delta - pre, delta + next};
  }
  return {std::clamp(b.lo, -S1b, S2b), std::clamp(b.hi, -S1b, S2b)};
}

Shape FiaParams::query_shape(int64_t dim) const {
  switch (in) {
    case FiaOrder::BNSD: return {B, N, S1, dim};
    case FiaOrder::TND: return {S1, N, dim};
    case FiaOrder::NTD: return {N, S1, dim};
    default: return bsh ? Shape{B, S1, N * dim} : Shape{B, S1, N, dim};
  }
}

Shape FiaParams::kv_shape(int64_t dim) const {
  if (paged() && nz) return {num_blocks, Nkv, dim / 16, block_size, 16};
  if (paged())
    return bnnbsd ? Shape{num_blocks, Nkv, block_size, dim} : Shape{num_blocks, block_size, Nkv * dim};
  switch (in) {
    case FiaOrder::BNSD: return {B, Nkv, S2, dim};
    case FiaOrder::TND: return {S2, Nkv, dim};
    case FiaOrder::NTD: return {Nkv, S2, dim};
    default: return bsh ? Shape{B, S2, Nkv * dim} : Shape{B, S2, Nkv, dim};
  }
}

Shape FiaParams::out_shape() const {
  switch (out) {
    case FiaOrder::BNSD: return {B, N, S1, Dv};
    case FiaOrder::NBSD: return {N, B, S1, Dv};
    case FiaOrder::TND: return {S1, N, Dv};
    case FiaOrder::NTD: return {N, S1, Dv};
    default: return bsh && layout == "BSH" ? Shape{B, S1, N * Dv} : Shape{B, S1, N, Dv};
  }
}

Shape FiaParams::lse_shape() const {
  if (!lse) return {1};
  return tnd ? Shape{S1, N, 1} : Shape{B, N, S1, 1};
}

Shape FiaParams::mask_shape() const {
  const int64_t cols = kv_tokens() + mask_pad;
  if (mask == "S1,S2") return {S1, cols};
  if (mask == "1,S1,S2") return {1, S1, cols};
  if (mask == "B,1,S1,S2") return {B, 1, S1, cols};
  if (mask == "1,1,S1,S2") return {1, 1, S1, cols};
  if (mask == "B,S2") return {B, cols};
  if (mask == "B,1,S2") return {B, 1, cols};
  if (mask == "B,1,1,S2") return {B, 1, 1, cols};
  if (mask == "2048,2048") return {2048, 2048};
  if (mask == "1,2048,2048") return {1, 2048, 2048};
  return {1, 1, 2048, 2048};
}

Shape FiaParams::pse_shape() const { return {pse[0] == 'B' ? B : 1, N, S1, kv_tokens() + pse_pad}; }

int64_t FiaParams::mask_batch_stride() const {
  if (mask[0] != 'B') return 0;
  const Shape s = mask_shape();
  int64_t n = 1;
  for (size_t k = 1; k < s.size(); ++k) n *= s[k];
  return n;
}

Strides FiaParams::pse_strides() const {
  const int64_t cols = kv_tokens() + pse_pad;
  return {pse[0] == 'B' ? N * S1 * cols : 0, cols, S1 * cols};
}

static Strides order_strides(FiaOrder o, int64_t S, int64_t heads, int64_t dim) {
  switch (o) {
    case FiaOrder::BNSD: return {heads * S * dim, dim, S * dim};
    case FiaOrder::TND: return {0, heads * dim, dim};
    case FiaOrder::NTD: return {0, dim, S * dim};
    default: return {S * heads * dim, heads * dim, dim};
  }
}

Strides FiaParams::query_strides(int64_t dim) const { return order_strides(in, S1, N, dim); }
Strides FiaParams::kv_strides(int64_t dim) const { return order_strides(in, S2, Nkv, dim); }
Strides FiaParams::prefix_strides(int64_t dim) const { return order_strides(in, S_prefix, Nkv, dim); }

Shape FiaParams::list_shape(int64_t b, int64_t dim) const {
  if (in == FiaOrder::BNSD) return {1, Nkv, s2b[b], dim};
  return bsh ? Shape{1, s2b[b], Nkv * dim} : Shape{1, s2b[b], Nkv, dim};
}

Strides FiaParams::list_strides(int64_t b, int64_t dim) const { return order_strides(in, s2b[b], Nkv, dim); }

Shape FiaParams::prefix_shape(int64_t dim) const {
  if (in == FiaOrder::BNSD) return {1, Nkv, S_prefix, dim};
  return bsh ? Shape{1, S_prefix, Nkv * dim} : Shape{1, S_prefix, Nkv, dim};
}

int64_t FiaParams::out_vector(int64_t b, int64_t i, int64_t h) const {
  const int64_t row = query_row(b, i);
  switch (out) {
    case FiaOrder::BNSD: return (b * N + h) * S1 + row;
    case FiaOrder::NBSD: return (h * B + b) * S1 + row;
    case FiaOrder::TND: return row * N + h;
    case FiaOrder::NTD: return h * S1 + row;
    default: return (b * S1 + row) * N + h;
  }
}

int64_t FiaParams::lse_index(int64_t b, int64_t i, int64_t h) const {
  return tnd ? query_row(b, i) * N + h : (b * N + h) * S1 + query_row(b, i);
}

Shape FiaParams::post_quant_shape() const {
  if (!post.per_channel) return {1};
  return out_shape().size() == 3 && !tnd ? Shape{N * Dv} : Shape{N, Dv};
}

Shape FiaParams::combined_antiquant_shape() const {
  if (quant.key_mode == 1) return {2, B, kv_tokens()};
  return quant.per_tensor ? Shape{2} : Shape{2, Nkv, D};
}

Shape FiaParams::antiquant_shape(int mode, int64_t dim) const {
  switch (mode) {
    case 0: return quant.per_tensor ? Shape{1} : ifa() ? Shape{1, Nkv, dim} : Shape{Nkv, dim};
    case 1: return ifa() ? Shape{1, B, kv_tokens()} : Shape{B, kv_tokens()};
    case 2: return {Nkv};
    case 3: return {B, Nkv, kv_tokens()};
    case 4: return {num_blocks, block_size};
    case 6: return {1, B, Nkv, kv_tokens(), dim / 32};
    default: return {num_blocks, Nkv, block_size};
  }
}

int64_t FiaParams::antiquant_index(int mode, int64_t dim, int64_t b, int64_t t, int64_t hk, int64_t d,
                                   int64_t blk, int64_t r) const {
  switch (mode) {
    case 0: return quant.per_tensor ? 0 : hk * dim + d;
    case 1: return b * kv_tokens() + t;
    case 2: return hk;
    case 3: return (b * Nkv + hk) * kv_tokens() + t;
    case 4: return blk * block_size + r;
    case 6: return ((b * Nkv + hk) * kv_tokens() + t) * (dim / 32) + d / 32;
    default: return (blk * Nkv + hk) * block_size + r;
  }
}

}  // namespace kvbench
