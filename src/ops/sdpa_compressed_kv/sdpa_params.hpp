#pragma once
// Attributes, shapes and dtypes of one dnnl.SDPACompressedKV case.
#include <cstdint>
#include <string>

#include "ops/args.hpp"
#include "ops/signature.hpp"
#include "core/dtype.hpp"
#include "core/tensor.hpp"

namespace kvbench {

struct SdpaSide {  // K or V
  bool compressed = true, zero_point = false;
  DType data = DType::i8, scale = DType::f32, zp = DType::i8;
};

struct SdpaParams {
  int64_t N = 1, H = 1, H_kv = 1, S_q = 1, S_kv = 1, D = 64, G = 64, masked_rows = 0;
  SdpaSide k, v;
  bool k_transposed = false;  // k_layout "nhds"
  bool divide = false;        // scale_op "divide"
  double scale = 0;           // as f32
  int causal = 0;             // 0 none, 1 top-left, 2 bottom-right
  std::string mask = "none";  // "1,1,Sq,Skv", "N,1,Sq,Skv", "N,H,Sq,Skv", "1,1,1,Skv", "N,1,1,Skv"
  DType q = DType::f16;
  // The graph's fpmath_mode (default: the query's dtype, strict for f32) and apply_to_int:
  // whether a kernel may convert K~ and V~ to a narrower dtype than the scales' (spec).
  std::string fpmath = "f16";
  bool fpmath_to_int = true;

  bool has_mask() const { return mask != "none"; }
  // The mask's shape, and its element strides over (n, h, row) (0 where broadcast).
  Shape mask_shape() const;
  int64_t mask_stride(int axis) const;
};

const Signature& sdpa_signature();
SdpaParams parse_sdpa_params(Args& c);

}  // namespace kvbench
