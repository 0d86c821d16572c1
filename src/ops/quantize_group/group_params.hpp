#pragma once
// The attributes and shapes the two group operators share.
#include <cstdint>
#include <optional>

#include "core/dtype.hpp"
#include "ops/args.hpp"
#include "ops/signature.hpp"
#include "ref/microscaling.hpp"

namespace kvbench {

// What the codes are (attributes.code_format; specs/quantize-group.md).
enum class CodeFamily {
  integer,  // s4/i8/u4/u8 by bits and signed, scale (and zero point) in a float dtype
  float8,   // OCP FP8 or HiF8 codes under an f32 scale s = max|x| / scale_divisor
  mx,       // OCP MX: blocks of 32 under an E8M0 scale
  nvfp4,    // E2M1 under an E4M3 scale per 16 and an f32 global scale
};

struct GroupParams {
  int64_t bits = 8;
  bool is_signed = true;
  bool zero_point = false;  // attributes.with_zero_point. quantize: asymmetric with a zero point; dequantize:
                            // zp/offset tensor present
  int64_t group_size = 0;
  int64_t rows = 0, length = 0;
  CodeFamily family = CodeFamily::integer;
  DType code = DType::i8;    // the codes' dtype
  std::optional<Fp8> fp8;    // the FP8 layout of FP8 codes (family float8)
  MxElement mx;              // family mx: the element format
  DType scale = DType::f16;  // family mx: f8e8m0; nvfp4: f8e4m3fn; float8: f32; integer: by the case

  int64_t groups() const { return (length + group_size - 1) / group_size; }
  int64_t qmin() const { return dtype_int_min(code); }
  int64_t qmax() const { return dtype_int_max(code); }
  bool hif8() const { return code == DType::hifloat8; }
  // The value of code bits `bits` (FP8, HiF8, small floats; MXINT8's integer code).
  double code_value(uint64_t bits) const;
};

// The attributes and shapes both group operators declare.
std::vector<Param> group_params_declared();
GroupParams parse_group_params(Args& c);

}  // namespace kvbench
