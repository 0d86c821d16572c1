#pragma once
// Exact conversions between double and the narrow float formats (f16, bf16, f32).
// Every narrowing rounds to nearest, ties to even, in one step from double (no double
// rounding), with subnormals, overflow to infinity, and NaN handled.
#include <cstdint>

namespace kvbench {

uint16_t f16_bits_from_double(double x);
double f16_bits_to_double(uint16_t bits);
uint16_t bf16_bits_from_double(double x);
double bf16_bits_to_double(uint16_t bits);
uint32_t f32_bits_from_double(double x);
double f32_bits_to_double(uint32_t bits);

// The value x becomes when stored as f16 / bf16 / f32.
inline double round_f16(double x) { return f16_bits_to_double(f16_bits_from_double(x)); }
inline double round_bf16(double x) { return bf16_bits_to_double(bf16_bits_from_double(x)); }
inline double round_f32(double x) { return f32_bits_to_double(f32_bits_from_double(x)); }

// Distance from |x| to the next representable f16 above it (one unit in the last place).
double f16_ulp(double x);
double f32_ulp(double x);

}  // namespace kvbench
