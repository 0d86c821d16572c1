#pragma once
// Element types of kvbench tensors.
//
// s4/u4 are packed two per byte: element 2k in the LOW nibble (bits 0-3) of byte k,
// element 2k+1 in the HIGH nibble (bits 4-7), over the tensor's flat row-major index.
// An odd element count leaves the last high nibble as zero padding. s4 nibbles are
// two's complement [-8, 7]; u4 nibbles are [0, 15]. This is oneDNN's order, and the
// order kvbench defines for OpenPPL's int4 cache.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kvbench {

// boolean: one byte holding 0 or 1 (safetensors BOOL), for masks.
// f4e2m1, f4e1m2: 4-bit floats (sign, 2 or 1 exponent bits, bias 1, no inf or NaN), packed
// two per byte as s4/u4 are; f8e8m0: an 8-bit power of two 2^(bits - 127), 0xFF NaN (the
// OCP MX scale). Values in core/float_format.hpp; FIA's per-token-group antiquant.
// f8e4m3fn, f8e5m2: the OCP FP8 formats (core/float_format.hpp Fp8), one byte each.
// hifloat8: Huawei's HiFloat8 (core/hifloat8.hpp, specs/hifloat8.md), one byte each; FIA's
// HIFLOAT8 key/value antiquant.
// f6e2m3, f6e3m2: the OCP MX 6-bit floats (core/float_format.hpp SmallFloat), one code per
// byte in its low 6 bits (bits 6 and 7 zero; a byte with either set is no code: NaN).
enum class DType {
  f32,
  f16,
  bf16,
  i8,
  u8,
  s4,
  u4,
  i32,
  i64,
  boolean,
  f4e2m1,
  f4e1m2,
  f8e8m0,
  f8e4m3fn,
  f8e5m2,
  hifloat8,
  f6e2m3,
  f6e3m2
};
// The two FP8 layouts (values and rounding: core/float_format.hpp fp8_value, fp8_code).
enum class Fp8 { e4m3fn, e5m2 };
// The FP8 layout of an FP8 dtype; nullopt for every other dtype.
std::optional<Fp8> dtype_fp8(DType t);

std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);
int dtype_bits(DType t);
bool dtype_is_float(DType t);
// Bytes needed for `count` elements (packed types round up).
size_t dtype_storage_bytes(DType t, size_t count);
// Smallest and largest value of an integer dtype.
int64_t dtype_int_min(DType t);
int64_t dtype_int_max(DType t);
// Every dtype, in the order of their codes (the enum's values, which the kernels' dtype
// parameters hold: tools/dtype_codes_glsl.cpp writes them for the shaders).
std::span<const DType> all_dtypes();

}  // namespace kvbench
