// Shared by the pmx.dynamic_batching.MultiHeadCacheAttention kernels: parameters and
// cache addressing.
#ifndef KVBENCH_MHCA_COMMON_GLSL
#define KVBENCH_MHCA_COMMON_GLSL

layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint num_heads, num_kv_heads, head_dim, quant_bit;
  uint quant_group, cache_mode, cache_layout, page_size;
  uint num_layer, layer_idx, max_t, max_pages;
  uint t1_dtype, scale_dtype, cache_dtype, is_causal;
  uint is_alibi, decoding_batches, mask_rank, mask_cols;
  uint total_rows, num_items, batches;
  uint scale_groups;  // head_dim / quant_group (1 unquantized)
  uint qg_magic;      // division_magic(quant_group) (divide.glsl; 0 unquantized)
} pc;

// int64 index tensors hold values below 2^31: read the low word.
#define LOAD_I64(buf, i) int(buf[2u * (i)])

// Row T of the cache (layout table in specs/multi_head_cache_attention.md), element 0 of
// head h of k/v c. D is head_dim for the cache, head_dim / quant_group for the scale.
uint mhca_row(uint T, uint c, uint h, uint D) {
  const uint L = pc.num_layer, l = pc.layer_idx, H = pc.num_kv_heads, MaxT = pc.max_t;
  if (pc.cache_layout == 0u) return (((T * L + l) * 2u + c) * H + h) * D;
  if (pc.cache_layout == 1u) return (((l * MaxT + T) * 2u + c) * H + h) * D;
  if (pc.cache_layout == 2u) return (((l * 2u + c) * MaxT + T) * H + h) * D;
  return (((l * 2u + c) * H + h) * MaxT + T) * D;
}

#endif
