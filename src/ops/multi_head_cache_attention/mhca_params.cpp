#include "ops/multi_head_cache_attention/mhca_params.hpp"

#include <algorithm>
#include <numeric>

#include "core/rng.hpp"

namespace kvbench {

int64_t MhcaParams::cache_row(int64_t b, int64_t t) const {
  if (cache_mode == 0) return cachestarts[b] + t;
  return cachestarts[b * max_pages + t / page_size] + t % page_size;
}

std::vector<int64_t> MhcaParams::cache_shape(int64_t last) const {
  const int64_t L = num_layer, H = num_kv_heads, T = max_t;
  switch (cache_layout) {
    case 0: return {T, L, 2, H, last};
    case 1: return {L, T, 2, H, last};
    case 2: return {L, 2, T, H, last};
    default: return {L, 2, H, T, last};
  }
}

size_t MhcaParams::row_offset(int64_t T, int64_t c, int64_t h, int64_t last) const {
  const int64_t L = num_layer, l = layer_idx, H = num_kv_heads, MaxT = max_t;
  int64_t r = 0;
  switch (cache_layout) {
    case 0: r = ((T * L + l) * 2 + c) * H + h; break;
    case 1: r = ((l * MaxT + T) * 2 + c) * H + h; break;
    case 2: r = ((l * 2 + c) * MaxT + T) * H + h; break;
    default: r = ((l * 2 + c) * H + h) * MaxT + T; break;
  }
  return static_cast<size_t>(r * last);
}

MhcaParams parse_mhca_params(const CaseDef& c) {
  MhcaParams p;
  p.num_heads = c.integer("attributes", "num_heads");
  p.head_dim = c.integer("attributes", "head_dim");
  p.is_causal = c.boolean("attributes", "is_causal");
  p.is_alibi = c.boolean("attributes", "is_alibi", false);
  p.num_kv_heads = c.integer("attributes", "num_kv_heads", 0);
  p.num_layer = c.integer("attributes", "num_layer", 1);
  p.layer_idx = c.integer("attributes", "layer_idx", 0);
  p.quant_bit = c.integer("attributes", "quant_bit", 0);
  p.quant_group = c.integer("attributes", "quant_group", 8);
  p.cache_mode = c.integer("attributes", "cache_mode", 0);
  p.cache_layout = c.integer("attributes", "cache_layout", 0);
  p.page_size = c.integer("attributes", "page_size", 128);
  p.seqlens = c.integers("inputs", "seqlens");
  p.start_pos = c.integers("inputs", "start_pos");
  p.decoding_batches = c.integer("inputs", "decoding_batches", 0);
  p.mask_rank = c.integer("shapes", "attn_mask_rank", 0);
  p.mask_padding = c.integer("shapes", "attn_mask_padding", 0);
  p.cache_gap = c.integer("shapes", "cache_gap", 3);
  p.spare_pages = c.integer("shapes", "spare_pages", 2);
  p.t1 = c.dtype("query", DType::f16, {DType::f16, DType::f32});
  for (const char* t : {"current_key", "current_value"})
    if (c.has("dtypes", t) && c.dtype(t, p.t1, {DType::f16, DType::f32}) != p.t1)
      c.fail("dtypes", t, std::string(t) + " must have the dtype of query (T1)");
  p.scale = c.dtype("scale", DType::f16, {DType::f16, DType::f32});

  if (p.num_heads < 1) c.fail("attributes", "num_heads", "num_heads must be at least 1");
  if (p.num_kv_heads == 0) p.num_kv_heads = p.num_heads;  // the document's default
  if (p.num_kv_heads < 1 || p.num_heads % p.num_kv_heads != 0)
    c.fail("attributes", "num_kv_heads", "num_heads must be divisible by num_kv_heads");
  if (p.head_dim < 1) c.fail("attributes", "head_dim", "head_dim must be at least 1");
  if (p.num_layer < 1) c.fail("attributes", "num_layer", "num_layer must be at least 1");
  if (p.layer_idx < 0 || p.layer_idx >= p.num_layer) c.fail("attributes", "layer_idx", "layer_idx must lie in [0, num_layer)");
  if (p.quant_bit != 0 && p.quant_bit != 8 && p.quant_bit != 4) c.fail("attributes", "quant_bit", "quant_bit must be 0, 8 or 4");
  if (p.quant_bit && (p.quant_group < 1 || p.head_dim % p.quant_group != 0))
    c.fail("attributes", "quant_group", "quant_group must divide head_dim");
  if (p.cache_mode != 0 && p.cache_mode != 1) c.fail("attributes", "cache_mode", "cache_mode must be 0 or 1");
  if (p.cache_layout < 0 || p.cache_layout > 3) c.fail("attributes", "cache_layout", "cache_layout must be 0, 1, 2 or 3");
  if (p.page_size < 1) c.fail("attributes", "page_size", "page_size must be at least 1");
  const int64_t B = p.batches();
  if (B < 1) c.fail("inputs", "seqlens", "seqlens needs at least one batch");
  if (static_cast<int64_t>(p.start_pos.size()) != B)
    c.fail("inputs", "start_pos", "start_pos needs one entry per batch (" + std::to_string(B) + ")");
  for (int64_t b = 0; b < B; ++b) {
    if (p.seqlens[b] < 1) c.fail("inputs", "seqlens", "seqlens[" + std::to_string(b) + "] must be at least 1");
    if (p.start_pos[b] < 0) c.fail("inputs", "start_pos", "start_pos[" + std::to_string(b) + "] must not be negative");
  }
  if (p.decoding_batches < 0 || p.decoding_batches > B)
    c.fail("inputs", "decoding_batches", "decoding_batches must lie in [0, batches]");
  for (int64_t b = 0; b < p.decoding_batches; ++b)
    if (p.seqlens[b] != 1)
      c.fail("inputs", "seqlens", "decoding batch " + std::to_string(b) + " has seqlen " + std::to_string(p.seqlens[b]) +
                                      ": decoding batches hold one query token (specs/multi_head_cache_attention.md)");
  if (p.mask_rank != 0 && p.mask_rank != 2 && p.mask_rank != 3)
    c.fail("shapes", "attn_mask_rank", "attn_mask_rank must be 0 (no mask), 2 or 3");
  if (p.mask_padding < 0) c.fail("shapes", "attn_mask_padding", "attn_mask_padding must not be negative");
  if (p.quant_bit == 0) p.cache = p.t1;
  else p.cache = p.quant_bit == 8 ? DType::i8 : DType::s4;

  // Prefix sums; kvlen_b = start_pos_b + seqlen_b (the operator's invariant).
  p.seqstarts = {0};
  p.kvstarts = {0};
  for (int64_t b = 0; b < B; ++b) {
    p.seqstarts.push_back(p.seqstarts.back() + p.seqlens[b]);
    p.kvstarts.push_back(p.kvstarts.back() + p.kvlen(b));
  }
  if (p.cache_mode == 0) {
    // Sequences in reverse order with cache_gap unreferenced rows before each, so
    // cachestarts is neither sorted nor dense.
    p.cachestarts.assign(B, 0);
    int64_t row = p.cache_gap;
    for (int64_t b = B - 1; b >= 0; --b) {
      p.cachestarts[b] = row;
      row += p.kvlen(b) + p.cache_gap;
    }
    p.max_t = row;
  } else {
    // Pages shuffled by the case seed; spare pages and the -1 padding column are never read.
    int64_t used = 0, most = 0;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t pages = (p.kvlen(b) + p.page_size - 1) / p.page_size;
      used += pages;
      most = std::max(most, pages);
    }
    const int64_t total = used + p.spare_pages;
    std::vector<int64_t> order(static_cast<size_t>(total));
    std::iota(order.begin(), order.end(), 0);
    const CounterRng rng(c.seed, "page_table");
    for (int64_t i = total - 1; i > 0; --i) std::swap(order[i], order[rng.integer(static_cast<uint64_t>(i), 0, i)]);
    p.max_pages = most + 1;
    p.cachestarts.assign(static_cast<size_t>(B * p.max_pages), -1);
    int64_t next = 0;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t k = 0; k < (p.kvlen(b) + p.page_size - 1) / p.page_size; ++k)
        p.cachestarts[b * p.max_pages + k] = order[next++] * p.page_size;
    p.max_t = total * p.page_size;
  }
  return p;
}

}  // namespace kvbench
