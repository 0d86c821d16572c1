#pragma once
// The attributes and shapes the two group operators share.
#include <cstdint>
#include <optional>

#include "ops/args.hpp"
#include "ops/signature.hpp"
#include "core/dtype.hpp"

namespace kvbench {

struct GroupParams {
  int64_t bits = 8;
  bool is_signed = true;
  bool zero_point = false;  // attributes.with_zero_point. quantize: asymmetric with a zero point; dequantize:
                            // zp/offset tensor present
  int64_t group_size = 0;
  int64_t rows = 0, length = 0;
  DType code = DType::i8;  // s4/u4/i8/u8 from bits and signedness, or f8e4m3fn/f8e5m2 (code_format)
  std::optional<Fp8> fp8;  // the FP8 layout of FP8 codes

  int64_t groups() const { return (length + group_size - 1) / group_size; }
  int64_t qmin() const { return dtype_int_min(code); }
  int64_t qmax() const { return dtype_int_max(code); }
};

// The attributes and shapes both group operators declare.
std::vector<Param> group_params_declared();
GroupParams parse_group_params(Args& c);

}  // namespace kvbench
