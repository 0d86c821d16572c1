// f16 / bf16 conversions from double (src/core/float_format.hpp).
//
// Expected bit patterns, derived by hand from the IEEE formats:
//   f16  = 1 sign bit | 5 exponent bits (bias 15) | 10 mantissa bits.
//          normal value = (1 + m/2^10) * 2^(e-15); subnormal (e = 0) = m * 2^-24.
//   bf16 = 1 sign bit | 8 exponent bits (bias 127) | 7 mantissa bits.
//          normal value = (1 + m/2^7) * 2^(e-127); subnormal (e = 0) = m * 2^-133.
//   1.0     = 2^0                -> f16 e = 15 = 0b01111, m = 0 -> 0x3C00; bf16 e = 127 -> 0x3F80
//   65504   = (2 - 2^-10) * 2^15 -> f16 e = 30, m = 0x3FF -> 0x7BFF (largest finite)
//   65520   = halfway between 65504 (m odd) and 2^16 (would be 0x7C00 = inf): the tie goes
//             to the even neighbour, inf; anything below 65520 (65519.99) stays 0x7BFF.
//   2^-24   = smallest f16 subnormal -> 0x0001; 2^-25 is halfway between 0 and 2^-24: tie
//             to even -> 0x0000; 3*2^-26 = 0.75 * 2^-24 rounds up -> 0x0001.
//   2^-14   = smallest normal: e = 1, m = 0 -> 0x0400.
//   1 + 2^-11   lies halfway between 0x3C00 (m = 0, even) and 0x3C01: -> 0x3C00.
//   1 + 3*2^-11 lies halfway between 0x3C01 (odd) and 0x3C02 (even): -> 0x3C02.
//   bf16: 1 + 2^-8 is halfway between 0x3F80 and 0x3F81 -> 0x3F80; 1 + 3*2^-8 -> 0x3F82.
//         max finite 0x7F7F = (2 - 2^-7) * 2^127; overflow threshold (2 - 2^-8) * 2^127.
//         2^-133 = smallest bf16 subnormal -> 0x0001.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <cstring>
#include <utility>
#include <vector>

#include "core/float_format.hpp"

using namespace kvbench;

TEST_CASE("f16: one and the largest finite value") {
  CHECK(f16_bits_from_double(1.0) == 0x3C00);
  CHECK(f16_bits_from_double(-1.0) == 0xBC00);
  CHECK(f16_bits_from_double(65504.0) == 0x7BFF);
}

TEST_CASE("f16: overflow rounds to inf only from the halfway point 65520 up") {
  CHECK(f16_bits_from_double(65519.99) == 0x7BFF);
  CHECK(f16_bits_from_double(65520.0) == 0x7C00);
  CHECK(f16_bits_from_double(-65520.0) == 0xFC00);
  CHECK(f16_bits_from_double(std::numeric_limits<double>::infinity()) == 0x7C00);
  CHECK(f16_bits_from_double(-std::numeric_limits<double>::infinity()) == 0xFC00);
  CHECK(std::isinf(f16_bits_to_double(0xFC00)));
  CHECK(f16_bits_to_double(0xFC00) < 0);
}

TEST_CASE("f16: NaN stays NaN (exponent all ones, mantissa nonzero)") {
  const uint16_t b = f16_bits_from_double(std::numeric_limits<double>::quiet_NaN());
  CHECK((b & 0x7C00) == 0x7C00);
  CHECK((b & 0x03FF) != 0);
  CHECK(std::isnan(f16_bits_to_double(b)));
}

TEST_CASE("f16: subnormals round to nearest even") {
  CHECK(f16_bits_from_double(std::ldexp(1.0, -24)) == 0x0001);
  CHECK(f16_bits_from_double(std::ldexp(1.0, -25)) == 0x0000);
  CHECK(f16_bits_from_double(3.0 * std::ldexp(1.0, -26)) == 0x0001);
  CHECK(f16_bits_from_double(std::ldexp(1.0, -14)) == 0x0400);
  CHECK(f16_bits_to_double(0x0001) == std::ldexp(1.0, -24));
}

TEST_CASE("f16: a tie in the normal range goes to the even mantissa") {
  CHECK(f16_bits_from_double(1.0 + std::ldexp(1.0, -11)) == 0x3C00);
  CHECK(f16_bits_from_double(1.0 + 3.0 * std::ldexp(1.0, -11)) == 0x3C02);
}

TEST_CASE("f16: negative zero keeps its sign bit") {
  CHECK(f16_bits_from_double(-0.0) == 0x8000);
  CHECK(f16_bits_from_double(0.0) == 0x0000);
  CHECK(std::signbit(f16_bits_to_double(0x8000)));
}

TEST_CASE("f16: every non-NaN bit pattern survives bits -> double -> bits") {
  int mismatches = 0, checked = 0;
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const bool nan = (b & 0x7C00) == 0x7C00 && (b & 0x03FF) != 0;
    if (nan) continue;
    ++checked;
    if (f16_bits_from_double(f16_bits_to_double(static_cast<uint16_t>(b))) != b) ++mismatches;
  }
  CHECK(checked == 65536 - 2 * 1023);
  CHECK(mismatches == 0);
}

TEST_CASE("bf16: one, ties to even, overflow, subnormal") {
  CHECK(bf16_bits_from_double(1.0) == 0x3F80);
  CHECK(bf16_bits_from_double(1.0 + std::ldexp(1.0, -8)) == 0x3F80);
  CHECK(bf16_bits_from_double(1.0 + 3.0 * std::ldexp(1.0, -8)) == 0x3F82);
  const double max_finite = (2.0 - std::ldexp(1.0, -7)) * std::ldexp(1.0, 127);
  CHECK(bf16_bits_from_double(max_finite) == 0x7F7F);
  CHECK(bf16_bits_to_double(0x7F7F) == max_finite);
  const double halfway = (2.0 - std::ldexp(1.0, -8)) * std::ldexp(1.0, 127);
  CHECK(bf16_bits_from_double(std::nextafter(halfway, 0.0)) == 0x7F7F);
  CHECK(bf16_bits_from_double(halfway) == 0x7F80);
  CHECK(bf16_bits_from_double(std::ldexp(1.0, 128)) == 0x7F80);
  CHECK(bf16_bits_from_double(-std::ldexp(1.0, 128)) == 0xFF80);
  CHECK(bf16_bits_from_double(std::ldexp(1.0, -133)) == 0x0001);
}

TEST_CASE("f16_ulp: 2^-10 at 1.0, 2^-4 in [64, 128)") {
  CHECK(f16_ulp(1.0) == std::ldexp(1.0, -10));
  CHECK(f16_ulp(100.0) == 0.0625);
}

// An independent oracle for the conversions: the generic frexp/ldexp rounding kvbench used
// before the bit-level one, per format (ebits exponent bits, mbits mantissa bits).
namespace {

uint32_t oracle_narrow(double x, int ebits, int mbits) {
  const uint32_t sign = std::signbit(x) ? (1u << (ebits + mbits)) : 0u;
  const uint32_t exp_all_ones = ((1u << ebits) - 1u) << mbits;
  if (std::isnan(x)) return sign | exp_all_ones | (1u << (mbits - 1));
  const double a = std::fabs(x);
  const int bias = (1 << (ebits - 1)) - 1, emin = 1 - bias;
  if (a >= std::ldexp(2.0 - std::ldexp(1.0, -(mbits + 1)), bias)) return sign | exp_all_ones;
  if (a < std::ldexp(1.0, emin))
    return sign | static_cast<uint32_t>(std::nearbyint(std::ldexp(a, mbits - emin)));
  int e = 0;
  std::frexp(a, &e);
  const double scaled = std::nearbyint(std::ldexp(a, mbits - (e - 1)));
  return sign + (static_cast<uint32_t>(e - 1 + bias) << mbits) +
         (static_cast<uint32_t>(scaled) - (1u << mbits));
}

double oracle_widen(uint32_t bits, int ebits, int mbits) {
  const bool negative = (bits >> (ebits + mbits)) & 1u;
  const uint32_t exp_field = (bits >> mbits) & ((1u << ebits) - 1u), mant = bits & ((1u << mbits) - 1u);
  const int bias = (1 << (ebits - 1)) - 1;
  double v = exp_field == (1u << ebits) - 1u ? (mant ? NAN : INFINITY)
             : exp_field == 0                ? std::ldexp(static_cast<double>(mant), 1 - bias - mbits)
                                             : std::ldexp(static_cast<double>(mant | (1u << mbits)),
                                                          static_cast<int>(exp_field) - bias - mbits);
  return negative ? -v : v;
}

uint64_t bits_of(double x) {
  uint64_t u;
  std::memcpy(&u, &x, 8);
  return u;
}

}  // namespace

TEST_CASE("f16/bf16 widening: every bit pattern equals the oracle's value, bit for bit") {
  for (uint32_t b = 0; b < 65536; ++b) {
    const double f = f16_bits_to_double(static_cast<uint16_t>(b)), o = oracle_widen(b, 5, 10);
    if (std::isnan(o))
      REQUIRE(std::isnan(f));
    else
      REQUIRE(bits_of(f) == bits_of(o));
    const double g = bf16_bits_to_double(static_cast<uint16_t>(b)), p = oracle_widen(b, 8, 7);
    if (std::isnan(p))
      REQUIRE(std::isnan(g));
    else
      REQUIRE(bits_of(g) == bits_of(p));
  }
}

TEST_CASE(
    "f16/bf16 narrowing equals the oracle at every pattern, its halfway points and neighbours, and random "
    "doubles") {
  std::vector<double> xs;
  for (uint32_t b = 0; b < 65536; ++b)
    for (const auto& [ebits, mbits] : {std::pair{5, 10}, std::pair{8, 7}}) {
      const double v = oracle_widen(b, ebits, mbits), w = oracle_widen(b + 1, ebits, mbits);
      if (!std::isfinite(v)) continue;
      xs.push_back(v);
      xs.push_back(std::nextafter(v, INFINITY));
      xs.push_back(std::nextafter(v, -INFINITY));
      if (std::isfinite(w) && (b & 0x7FFF) != 0x7FFF) {
        const double mid = v + (w - v) / 2;  // exact: one more bit than the format has
        xs.insert(xs.end(), {mid, std::nextafter(mid, INFINITY), std::nextafter(mid, -INFINITY)});
      }
    }
  uint64_t s = 12345;
  for (int i = 0; i < 200000; ++i) {  // any double: every exponent, both signs
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double x;
    std::memcpy(&x, &s, 8);
    xs.push_back(x);
  }
  xs.insert(xs.end(), {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 5e-324, -5e-324, 1e308, 65520.0, 65519.99});
  for (double x : xs) {
    CAPTURE(x);
    REQUIRE(f16_bits_from_double(x) == oracle_narrow(x, 5, 10));
    REQUIRE(bf16_bits_from_double(x) == oracle_narrow(x, 8, 7));
    // round_f16/round_bf16 round on the value, branch-free: the value of the narrowed
    // bits, bit for bit (NaN: a quiet NaN with x's sign, as the widened bits are).
    const double f = oracle_widen(oracle_narrow(x, 5, 10), 5, 10),
                 b = oracle_widen(oracle_narrow(x, 8, 7), 8, 7);
    if (std::isnan(x)) {
      REQUIRE(bits_of(round_f16(x)) == bits_of(f16_bits_to_double(f16_bits_from_double(x))));
      REQUIRE(bits_of(round_bf16(x)) == bits_of(bf16_bits_to_double(bf16_bits_from_double(x))));
    } else {
      REQUIRE(bits_of(round_f16(x)) == bits_of(f));
      REQUIRE(bits_of(round_bf16(x)) == bits_of(b));
    }
  }
}
