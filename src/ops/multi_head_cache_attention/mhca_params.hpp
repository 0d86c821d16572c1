#pragma once
// The attributes, inputs and derived geometry of one MultiHeadCacheAttention case.
#include <cstdint>
#include <vector>

#include "ops/args.hpp"
#include "ops/signature.hpp"
#include "core/dtype.hpp"

namespace kvbench {

struct MhcaParams {
  // Attributes, named as in the document.
  int64_t num_heads = 0, head_dim = 0, num_kv_heads = 0, num_layer = 1, layer_idx = 0;
  int64_t quant_bit = 0, quant_group = 8, cache_mode = 0, cache_layout = 0, page_size = 128;
  bool is_causal = false, is_alibi = false;
  // The ragged batch: per-batch query lengths and start positions.
  std::vector<int64_t> seqlens, start_pos;
  int64_t decoding_batches = 0;
  // attn_mask: rank 0 (none), 2 or 3; extra padding columns past sum(kvlens).
  int64_t mask_rank = 0, mask_padding = 0;
  // Cache geometry the case generator chooses: unreferenced rows between sequences
  // (offset mode) and unused pages (paged mode), all poisoned with NaN.
  int64_t cache_gap = 3, spare_pages = 2;
  DType t1 = DType::f16, scale = DType::f16, cache = DType::f16;

  // Derived.
  std::vector<int64_t> seqstarts, kvstarts;  // B + 1 prefix sums
  std::vector<int64_t> cachestarts;          // B (offset) or B x max_pages (paged, -1 padded)
  int64_t max_pages = 0;                     // columns of the paged cachestarts
  int64_t max_t = 0;                         // rows of the cache

  int64_t batches() const { return static_cast<int64_t>(seqlens.size()); }
  int64_t kvlen(int64_t b) const { return start_pos[b] + seqlens[b]; }
  int64_t total_rows() const { return seqstarts.back(); }
  int64_t total_kv() const { return kvstarts.back(); }
  int64_t group_ratio() const { return num_heads / num_kv_heads; }
  int64_t scale_groups() const { return quant_bit ? head_dim / quant_group : 0; }
  int64_t mask_cols() const { return total_kv() + mask_padding; }
  // Cache row of token t of batch b, through cachestarts.
  int64_t cache_row(int64_t b, int64_t t) const;
  // Shape of the cache (last = head_dim) or the scale (last = head_dim / quant_group).
  std::vector<int64_t> cache_shape(int64_t last) const;
  // Flat offset of element 0 of (row T, k/v c, kv head h).
  size_t row_offset(int64_t T, int64_t c, int64_t h, int64_t last) const;
};

const Signature& mhca_signature();
// Checks a parsed case (throws CaseError naming the field); the seed shuffles the page table.
MhcaParams parse_mhca_params(Args& c);

}  // namespace kvbench
