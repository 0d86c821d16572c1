#include "core/float_format.hpp"

#include <bit>
#include <cmath>
#include <limits>

namespace kvbench {
namespace {

// Rounds x to a binary format with `ebits` exponent bits and `mbits` stored mantissa
// bits (IEEE-style: bias 2^(ebits-1)-1, subnormals, inf/NaN) and returns its bits.
uint32_t narrow_bits(double x, int ebits, int mbits) {
  const uint32_t sign = std::signbit(x) ? (1u << (ebits + mbits)) : 0u;
  const uint32_t exp_all_ones = ((1u << ebits) - 1u) << mbits;
  if (std::isnan(x)) return sign | exp_all_ones | (1u << (mbits - 1));  // quiet NaN
  const double a = std::fabs(x);
  const int bias = (1 << (ebits - 1)) - 1;
  const int emin = 1 - bias;
  // Halfway between the largest finite value and 2^(bias+1): at or above it, round to inf
  // (the tie goes to inf because the largest finite mantissa is odd).
  const double overflow = std::ldexp(2.0 - std::ldexp(1.0, -(mbits + 1)), bias);
  if (a >= overflow) return sign | exp_all_ones;
  if (a < std::ldexp(1.0, emin)) {
    // Subnormal range: a multiple of 2^(emin - mbits). Scaling by a power of two is exact,
    // and nearbyint rounds half to even in the default rounding mode. A result of
    // 2^mbits is the smallest normal, whose bits follow on naturally.
    return sign | static_cast<uint32_t>(std::nearbyint(std::ldexp(a, mbits - emin)));
  }
  int e = 0;
  std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1): the unbiased exponent is e - 1
  const int exponent = e - 1;
  const double scaled = std::nearbyint(std::ldexp(a, mbits - exponent));  // [2^m, 2^(m+1)]
  // A mantissa that rounds up to 2^(m+1) carries into the exponent field, as it should.
  return sign + (static_cast<uint32_t>(exponent + bias) << mbits) +
         (static_cast<uint32_t>(scaled) - (1u << mbits));
}

double widen_bits(uint32_t bits, int ebits, int mbits) {
  const bool negative = (bits >> (ebits + mbits)) & 1u;
  const uint32_t exp_field = (bits >> mbits) & ((1u << ebits) - 1u);
  const uint32_t mant = bits & ((1u << mbits) - 1u);
  const int bias = (1 << (ebits - 1)) - 1;
  double v;
  if (exp_field == (1u << ebits) - 1u) {
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (exp_field == 0) {
    v = std::ldexp(static_cast<double>(mant), 1 - bias - mbits);
  } else {
    v = std::ldexp(static_cast<double>(mant | (1u << mbits)), static_cast<int>(exp_field) - bias - mbits);
  }
  return negative ? -v : v;
}

}  // namespace

uint16_t f16_bits_from_double(double x) { return static_cast<uint16_t>(narrow_bits(x, 5, 10)); }
double f16_bits_to_double(uint16_t bits) { return widen_bits(bits, 5, 10); }
uint16_t bf16_bits_from_double(double x) { return static_cast<uint16_t>(narrow_bits(x, 8, 7)); }
double bf16_bits_to_double(uint16_t bits) { return widen_bits(bits, 8, 7); }
uint32_t f32_bits_from_double(double x) { return std::bit_cast<uint32_t>(static_cast<float>(x)); }
double f32_bits_to_double(uint32_t bits) { return static_cast<double>(std::bit_cast<float>(bits)); }

double f16_ulp(double x) {
  const double a = std::fabs(round_f16(x));
  if (a < std::ldexp(1.0, -14)) return std::ldexp(1.0, -24);
  int e = 0;
  std::frexp(a, &e);
  return std::ldexp(1.0, e - 1 - 10);
}

double f32_ulp(double x) {
  const float a = std::fabs(static_cast<float>(x));
  return static_cast<double>(std::nextafter(a, std::numeric_limits<float>::infinity()) - a);
}

}  // namespace kvbench
