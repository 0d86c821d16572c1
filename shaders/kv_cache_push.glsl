// The parameters shared by the pmx.KeyValueCache store and fetch kernels.
layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint batch, seqlen, heads, head_dim;
  uint quant_group, quant_bit, num_layer, layer_idx;
  uint max_batch, max_seqlen, start_pos, layout_;
  uint num_repeat, input_dtype, scale_dtype, cache_dtype;
} pc;
