#pragma once
// HiFloat8 (HiF8), the Ascend 950's tapered 8-bit float (specs/hifloat8.md): a sign bit and a
// 7-bit payload whose prefix-coded "dot" field sets the exponent width (0-4 bits, sign and
// magnitude) and so the mantissa width (3, 3, 3, 2, 1 bits); payloads 0000MMM are 2^(M-23).
// 0x00 is the only zero, 0x80 the only NaN, 0x6F / 0xEF are +-Inf, 32768 the largest value.
#include <array>
#include <cstdint>

namespace kvbench {

inline constexpr uint8_t kHif8Nan = 0x80;
inline constexpr uint8_t kHif8Inf = 0x6F;  // | 0x80 for -Inf
inline constexpr uint8_t kHif8Max = 0x6E;  // 32768; | 0x80 for -32768
inline constexpr double kHif8MaxValue = 32768.0;

// What a value past the largest encodes to: `to_inf` (non-saturating: +-Inf, from 40960 up and
// for +-inf) or `saturate` (+-32768 for both, as the hardware's saturating conversion documents).
// NaN is 0x80 either way.
enum class Hif8Overflow { to_inf, saturate };

// The value of a code, exactly (every HiF8 value is exact in f16, bf16, f32 and double).
double hif8_decode(uint8_t code);
// The 256 values by code (hif8_decode's, looked up).
const std::array<double, 256>& hif8_values();
// x rounded to HiF8 by TA: to nearest, ties away from zero on the magnitude, in one step from
// double; [2^-23, 2^-22) goes to 2^-22, smaller magnitudes and +-0 to 0x00 (the sign is lost:
// there is no -0 code).
uint8_t hif8_encode(double x, Hif8Overflow mode = Hif8Overflow::to_inf);

}  // namespace kvbench
