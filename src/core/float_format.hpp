#pragma once
// Exact conversions between double and the narrow float formats (f16, bf16, f32).
// Every narrowing rounds to nearest, ties to even, in one step from double (no double
// rounding), with subnormals, overflow to infinity, and NaN handled.
// Inline: the golden path converts every generated and every read element.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/dtype.hpp"

namespace kvbench {
namespace float_format_detail {

// Rounds x to a binary format with EBITS exponent bits and MBITS stored mantissa bits
// (IEEE-style: bias 2^(EBITS-1)-1, subnormals, inf/NaN) and returns its bits, working on
// the double's own bits: one rounding, to nearest with ties to even, for normal results;
// the rare subnormal results go through nearbyint on an exactly scaled value. The golden
// path converts every generated element through here, so it stays a few integer
// operations (tests/test_float_format.cpp checks it against a frexp/ldexp oracle).
template <int EBITS, int MBITS>
[[gnu::always_inline]] inline uint32_t narrow_bits(double x) {
  constexpr int bias = (1 << (EBITS - 1)) - 1, emin = 1 - bias, shift = 52 - MBITS;
  constexpr uint32_t exp_all_ones = ((1u << EBITS) - 1u) << MBITS;
  const uint64_t u = std::bit_cast<uint64_t>(x);
  const uint32_t sign = static_cast<uint32_t>(u >> 63) << (EBITS + MBITS);
  const uint64_t a = u & 0x7FFFFFFFFFFFFFFFull;
  if (a > 0x7FF0000000000000ull) return sign | exp_all_ones | (1u << (MBITS - 1));  // quiet NaN
  // Halfway between the largest finite value and 2^(bias+1): at or above it, inf (the tie
  // goes to inf because the largest finite mantissa is odd).
  // (2 - 2^-(MBITS+1)) * 2^bias: exponent bias, the top MBITS + 1 mantissa bits set.
  constexpr uint64_t overflow =
      (static_cast<uint64_t>(bias + 1023) << 52) | (((1ull << (MBITS + 1)) - 1) << (51 - MBITS));
  if (a >= overflow) return sign | exp_all_ones;
  const int exponent = static_cast<int>(a >> 52) - 1023;
  if (exponent < emin) {
    // Subnormal range: a multiple of 2^(emin - MBITS). Scaling by a power of two is exact,
    // and nearbyint rounds half to even in the default rounding mode. A result of 2^MBITS
    // is the smallest normal, whose bits follow on naturally.
    return sign | static_cast<uint32_t>(std::nearbyint(std::ldexp(std::bit_cast<double>(a), MBITS - emin)));
  }
  const uint64_t mant = a & 0xFFFFFFFFFFFFFull;
  uint32_t r = (static_cast<uint32_t>(exponent + bias) << MBITS) + static_cast<uint32_t>(mant >> shift);
  const uint64_t rest = mant & ((1ull << shift) - 1), half = 1ull << (shift - 1);
  // A mantissa that rounds up past its field carries into the exponent, as it should.
  // Branch-free: which way a random draw rounds is a coin toss a branch would mispredict.
  r += static_cast<uint32_t>(rest > half) | (static_cast<uint32_t>(rest == half) & r & 1u);
  return sign | r;
}

template <int EBITS, int MBITS>
[[gnu::always_inline]] inline double widen_bits(uint32_t bits) {
  constexpr int bias = (1 << (EBITS - 1)) - 1;
  const bool negative = (bits >> (EBITS + MBITS)) & 1u;
  const uint32_t exp_field = (bits >> MBITS) & ((1u << EBITS) - 1u);
  const uint64_t mant = bits & ((1u << MBITS) - 1u);
  double v;
  if (exp_field == (1u << EBITS) - 1u) {
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (exp_field == 0) {
    v = static_cast<double>(mant) * std::ldexp(1.0, 1 - bias - MBITS);  // exact: a small integer times 2^k
  } else {
    v = std::bit_cast<double>((static_cast<uint64_t>(static_cast<int>(exp_field) - bias + 1023) << 52) |
                              (mant << (52 - MBITS)));
  }
  // The sign set by its bit, not chosen by a branch (random signs would mispredict it).
  return std::bit_cast<double>(std::bit_cast<uint64_t>(v) | (static_cast<uint64_t>(negative) << 63));
}

// The value of x rounded to that format, as a double, without going through its bits:
// branch-free, so that a loop over a span vectorizes. Adding c = 1.5 * 2^(e + 52 - MBITS)
// to |x| (e: x's exponent, clamped to the format's normal range) puts |x| in a binade whose
// ulp is the format's quantum at x, so the sum rounds |x| to that quantum, ties to even (c
// is an even multiple of it); subtracting c again is exact. Below the format's normal range
// the quantum is the subnormal one, as it should be. Past the largest finite value: inf.
// Equal to widen_bits(narrow_bits(x)) for every double (tests/test_float_format.cpp).
template <int EBITS, int MBITS>
[[gnu::always_inline]] inline double round_value(double x) {
  constexpr int64_t bias = (1 << (EBITS - 1)) - 1, emin = 1 - bias;
  constexpr double largest = [] {  // (2 - 2^-MBITS) * 2^bias
    double v = 2.0 - 1.0 / (1 << MBITS);
    for (int64_t i = 0; i < bias; ++i) v *= 2;
    return v;
  }();
  const uint64_t u = std::bit_cast<uint64_t>(x), sign = u & 0x8000000000000000ull;
  const double a = std::bit_cast<double>(u ^ sign);
  const int64_t e = std::clamp(static_cast<int64_t>(u >> 52 & 0x7FF) - 1023, emin, bias + 1);
  const double c =
      std::bit_cast<double>(static_cast<uint64_t>(e + 1023 + 52 - MBITS) << 52 | 0x8000000000000ull);
  double r = (a + c) - c;
  r = r > largest ? std::numeric_limits<double>::infinity() : r;
  r = a != a ? std::numeric_limits<double>::quiet_NaN() : r;
  return std::bit_cast<double>(std::bit_cast<uint64_t>(r) | sign);
}

// The FP8 code of x (core/float_format.hpp fp8_code), without a branch or a select that
// would keep a loop of it from vectorizing (the golden path encodes every generated FP8 K/V
// element). Adding c = 1.5 * 2^(e - MBITS + 52), e = |x|'s exponent clamped to [emin, 17],
// puts |x| in c's binade, whose ulp is the format's quantum 2^(e - MBITS) at |x|: the sum
// rounds |x| to the format (ties to even), and its bits less c's count quanta, k. A normal
// |x| in [2^e, 2^(e+1)) counts k in [2^MBITS, 2^(MBITS+1)], so its code is k plus the
// exponent field's (e + BIAS - 1) << MBITS (k = 2^(MBITS+1), a carry, steps the exponent);
// below 2^emin that field is 0 and k the subnormal code. Past 2^17 every value overflows
// both formats, and the code stays past the largest. A NaN's code is chosen by a mask: a
// ternary there would sink the add into a branch the vectorizer cannot if-convert.
template <int MBITS, int BIAS, bool E4M3FN>
[[gnu::always_inline]] inline unsigned fp8_code_bits(double x, bool saturate) {
  constexpr int64_t emin = 1 - BIAS;
  constexpr int64_t largest_code = E4M3FN ? 0x7E : 0x7B;  // 448, 57344
  constexpr int64_t overflow_code = E4M3FN ? 0x7F : 0x7C, nan_code = E4M3FN ? 0x7F : 0x7E;
  const auto u = std::bit_cast<uint64_t>(x);
  const auto au = static_cast<int64_t>(u & 0x7FFFFFFFFFFFFFFFull);
  const int64_t e = std::clamp<int64_t>((au >> 52) - 1023, emin, 17);
  const int64_t c = (e - MBITS + 52 + 1023) << 52 | int64_t{1} << 51;
  const double sum = std::bit_cast<double>(au) + std::bit_cast<double>(c);
  int64_t code = std::bit_cast<int64_t>(sum) - c + ((e + BIAS - 1) << MBITS);
  const int64_t over = (largest_code - code) >> 63;  // all ones past the largest code
  code = (code & ~over) | ((saturate ? largest_code : overflow_code) & over);
  const int64_t nan = (0x7FF0000000000000ll - au) >> 63;  // all ones for a NaN
  code = (code & ~nan) | (nan_code & nan);
  return static_cast<unsigned>(static_cast<int64_t>(u >> 63) << 7 | code);
}

}  // namespace float_format_detail

inline uint16_t f16_bits_from_double(double x) {
  return static_cast<uint16_t>(float_format_detail::narrow_bits<5, 10>(x));
}
inline double f16_bits_to_double(uint16_t bits) { return float_format_detail::widen_bits<5, 10>(bits); }
inline uint16_t bf16_bits_from_double(double x) {
  return static_cast<uint16_t>(float_format_detail::narrow_bits<8, 7>(x));
}
inline double bf16_bits_to_double(uint16_t bits) { return float_format_detail::widen_bits<8, 7>(bits); }
inline uint32_t f32_bits_from_double(double x) { return std::bit_cast<uint32_t>(static_cast<float>(x)); }
inline double f32_bits_to_double(uint32_t bits) { return static_cast<double>(std::bit_cast<float>(bits)); }

// The value x becomes when stored as f16 / bf16 / f32.
// +infinity, the references' "no key" and masked-score value.
inline constexpr double kInf = std::numeric_limits<double>::infinity();

[[gnu::always_inline]] inline double round_f16(double x) {
  return float_format_detail::round_value<5, 10>(x);
}
[[gnu::always_inline]] inline double round_bf16(double x) {
  return float_format_detail::round_value<8, 7>(x);
}
inline double round_f32(double x) { return f32_bits_to_double(f32_bits_from_double(x)); }

// The small floats with no infinity or NaN: OCP MX v1.0's FP4 E2M1, FP6 E2M3 and E3M2
// (section 5.3), and CANN's FP4 E1M2. Bias 2^(ebits-1) - 1 (E1M2: 1), subnormals at exponent field 0,
// code = sign << (ebits + mbits) | exponent << mbits | mantissa. Largest magnitudes: E2M1 6,
// E1M2 1.75, E2M3 7.5, E3M2 28. The code of x rounds to nearest, ties to the even code, and
// saturates at the largest magnitude (NaN: the largest); a negative x keeps its sign bit.
enum class SmallFloat { e2m1, e1m2, e2m3, e3m2 };
struct SmallFloatLayout {
  int ebits, mbits;
  int exponent_bias;  // 2^(ebits-1) - 1, but 1 for E1M2 (CANN's), whose exponent bit is 0 or 1
  int bias() const { return exponent_bias; }
  int bits() const { return 1 + ebits + mbits; }
  // The exponent of the largest normal magnitude (OCP MX's emax_elem): E2M1 2, E2M3 2, E3M2 4.
  int emax() const { return (1 << ebits) - 1 - bias(); }
};
SmallFloatLayout small_float_layout(SmallFloat f);
// The value of a code; NaN for bits beyond the format's width (no code has them).
double small_float_value(SmallFloat f, unsigned code);
unsigned small_float_code(SmallFloat f, double x);
double small_float_max(SmallFloat f);
// The code's neighbour away from zero when x lies exactly halfway between two codes (where
// round-half-away-from-zero, as Microsoft's microxcaling rounds, picks the other one);
// otherwise the code itself.
unsigned small_float_code_away(SmallFloat f, double x);
// FP4 as FIA names it: E2M1 (e1m2 false) or E1M2.
inline double fp4_value(bool e1m2, unsigned code) {
  return small_float_value(e1m2 ? SmallFloat::e1m2 : SmallFloat::e2m1, code);
}
inline unsigned fp4_code(bool e1m2, double x) {
  return small_float_code(e1m2 ? SmallFloat::e1m2 : SmallFloat::e2m1, x);
}
// FLOAT8_E8M0: 2^(bits - 127), 0xFF NaN. The code of a power of two in [2^-127, 2^127]
// (or NaN); anything else is a logic error.
double e8m0_value(unsigned bits);
unsigned e8m0_code(double x);

// FP8 (OCP 8-bit Floating Point Specification (OFP8) rev 1.0, 2023-06-20), one byte a code,
// sign in bit 7:
// - FLOAT8_E4M3FN: 4 exponent bits, bias 7, 3 mantissa bits; no infinities, S.1111.111 is
//   the only NaN, so the largest magnitude is S.1111.110 = 448; subnormals m * 2^-9.
// - FLOAT8_E5M2: IEEE 754's binary16 layout cut to 2 mantissa bits: bias 15, largest 57344,
//   S.11111.00 infinity, S.11111.{01,10,11} NaN; subnormals m * 2^-16.
// How a value past the largest magnitude is encoded (OFP8 section 5.1): `overflow_to_special`
// (torch's `.to(float8_*)`, CUDA's __NV_NOSAT): E4M3FN NaN, E5M2 infinity; `saturate`
// (CUDA's __NV_SATFINITE, the quantizers): the largest finite value of the sign, infinities
// included. Either way a NaN stays NaN (E4M3FN 0x7F, E5M2 0x7E, with the sign).
enum class Fp8Overflow { overflow_to_special, saturate };
double fp8_value(Fp8 f, unsigned code);
// The code of x rounded to nearest, ties to the even code, in one step from double. "Past
// the largest" is decided after rounding: E4M3FN 464 rounds to 448, anything above to 480,
// which overflows (torch c10/util/Float8_e4m3fn.h agrees).
unsigned fp8_code(Fp8 f, double x, Fp8Overflow overflow = Fp8Overflow::overflow_to_special);
double fp8_max(Fp8 f);  // 448, 57344
inline unsigned fp8_code_inline(Fp8 f, double x, bool saturate) {
  return f == Fp8::e4m3fn ? float_format_detail::fp8_code_bits<3, 7, true>(x, saturate)
                          : float_format_detail::fp8_code_bits<2, 15, false>(x, saturate);
}
// The 256 values of a format, by code (fp8_value looks them up).
const std::array<double, 256>& fp8_values(Fp8 f);
// out[i] = the value of E4M3FN code codes[i], bit for bit fp8_values(Fp8::e4m3fn)'s, by
// integer steps that vectorize (Tensor::get_range: half the table's time a code).
void e4m3fn_values(const uint8_t* codes, size_t n, double* out);

// Distance from |x| to the next representable f16 above it (one unit in the last place).
double f16_ulp(double x);
double f32_ulp(double x);

}  // namespace kvbench
