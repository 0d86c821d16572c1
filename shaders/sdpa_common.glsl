// Shared by the dnnl.SDPACompressedKV kernels; mirrors struct SdpaPush in
// src/ops/sdpa_compressed_kv/sdpa_compressed_kv.cpp.
#ifndef KVBENCH_SDPA_COMMON_GLSL
#define KVBENCH_SDPA_COMMON_GLSL

layout(push_constant) uniform Push {
  uint N, H, H_kv, S_q;
  uint S_kv, G, k_compressed, v_compressed;
  uint k_layout, k_dtype, v_dtype, sk_dtype;
  uint sv_dtype, zk_dtype, zv_dtype, has_zk;
  uint has_zv, q_dtype, scale_op, causal;      // causal: 0 none, 1 top-left, 2 bottom-right
  uint has_mask, mask_n_stride, mask_h_stride, mask_q_stride;
  uint num_items, nsplit, chunk, head_dim;
} pc;

#endif
