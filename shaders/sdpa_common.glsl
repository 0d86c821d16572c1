// The parameters shared by the dnnl.SDPACompressedKV kernels.
#ifndef KVBENCH_SDPA_COMMON_GLSL
#define KVBENCH_SDPA_COMMON_GLSL

layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint N, num_heads, num_kv_heads, S_q;
  uint S_kv, G, k_compressed, v_compressed;
  uint k_layout, k_dtype, v_dtype, sk_dtype;
  uint sv_dtype, zk_dtype, zv_dtype, has_zk;
  uint has_zv, q_dtype, scale_op, causal;      // causal: 0 none, 1 top-left, 2 bottom-right
  uint has_mask, mask_n_stride, mask_h_stride, mask_q_stride;
  uint num_items;
} pc;

#endif
