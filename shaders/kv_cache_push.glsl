// Push constants shared by the pmx.KeyValueCache store and fetch kernels; mirrors
// struct KvCachePush in src/ops/key_value_cache/key_value_cache.cpp.
layout(push_constant) uniform Push {
  uint batch, seqlen, heads, head_dim;
  uint quant_group, quant_bit, num_layer, layer_idx;
  uint max_batch, max_seqlen, start_pos, layout_;
  uint num_repeat, input_dtype, scale_dtype, cache_dtype;
} pc;
