// The OCP FP8 formats (OFP8 rev 1.0): every one of the 256 codes of E4M3FN and E5M2 decoded
// against the specification's formula (tests/ofp8_formula.hpp, independent of core/float_format.cpp),
// and encoding checked at every code, every midpoint (ties to the even code), in the
// subnormal range and past the largest value under both overflow rules.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "core/float_format.hpp"
#include "core/tensor.hpp"
#include "ofp8_formula.hpp"

using namespace kvbench;

namespace {

bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

constexpr auto kSat = Fp8Overflow::saturate;

}  // namespace

TEST_CASE("FP8 E4M3FN: every one of the 256 codes against OFP8's formula, and back") {
  for (unsigned c = 0; c < 256; ++c) {
    CAPTURE(c);
    CHECK(same(fp8_value(Fp8::e4m3fn, c), e4m3_formula(c)));
    if (!std::isnan(e4m3_formula(c))) {
      CHECK(fp8_code(Fp8::e4m3fn, e4m3_formula(c)) == c);
      CHECK(fp8_code(Fp8::e4m3fn, e4m3_formula(c), kSat) == c);
    }
  }
  // Landmarks, by hand: 2^-9, 7 * 2^-9, 2^-6, 1, 1.875 * 2^7, 2^8, 1.75 * 2^8.
  CHECK(fp8_value(Fp8::e4m3fn, 0x01) == 0.001953125);
  CHECK(fp8_value(Fp8::e4m3fn, 0x07) == 0.013671875);
  CHECK(fp8_value(Fp8::e4m3fn, 0x08) == 0.015625);
  CHECK(fp8_value(Fp8::e4m3fn, 0x38) == 1.0);
  CHECK(fp8_value(Fp8::e4m3fn, 0x77) == 240.0);
  CHECK(fp8_value(Fp8::e4m3fn, 0x78) == 256.0);  // exponent all ones is a finite binade
  CHECK(fp8_value(Fp8::e4m3fn, 0x7E) == 448.0);
  CHECK(fp8_value(Fp8::e4m3fn, 0xFE) == -448.0);
  CHECK(std::isnan(fp8_value(Fp8::e4m3fn, 0x7F)));
  CHECK(std::isnan(fp8_value(Fp8::e4m3fn, 0xFF)));
  CHECK(same(fp8_value(Fp8::e4m3fn, 0x80), -0.0));
  CHECK(fp8_max(Fp8::e4m3fn) == 448.0);
}

TEST_CASE("FP8 E5M2: every one of the 256 codes against OFP8's formula, and back") {
  for (unsigned c = 0; c < 256; ++c) {
    CAPTURE(c);
    CHECK(same(fp8_value(Fp8::e5m2, c), e5m2_formula(c)));
    if (!std::isnan(e5m2_formula(c)) && !std::isinf(e5m2_formula(c)))
      CHECK(fp8_code(Fp8::e5m2, e5m2_formula(c)) == c);
  }
  CHECK(fp8_value(Fp8::e5m2, 0x01) == std::ldexp(1.0, -16));
  CHECK(fp8_value(Fp8::e5m2, 0x04) == std::ldexp(1.0, -14));
  CHECK(fp8_value(Fp8::e5m2, 0x3C) == 1.0);
  CHECK(fp8_value(Fp8::e5m2, 0x7B) == 57344.0);
  CHECK(fp8_value(Fp8::e5m2, 0x7C) == INFINITY);
  CHECK(fp8_value(Fp8::e5m2, 0xFC) == -INFINITY);
  for (unsigned c : {0x7Du, 0x7Eu, 0x7Fu, 0xFDu, 0xFEu, 0xFFu}) CHECK(std::isnan(fp8_value(Fp8::e5m2, c)));
  CHECK(fp8_max(Fp8::e5m2) == 57344.0);
}

TEST_CASE("FP8 encoding: every midpoint between neighbours ties to the even code") {
  for (const Fp8 f : {Fp8::e4m3fn, Fp8::e5m2}) {
    const auto formula = f == Fp8::e4m3fn ? e4m3_formula : e5m2_formula;
    for (unsigned c = 0; c + 1 < 0x7Fu; ++c) {
      const double lo = formula(c), hi = formula(c + 1);
      if (std::isnan(hi) || std::isinf(hi)) break;
      CAPTURE(c);
      const double mid = (lo + hi) / 2;  // exact in double
      const unsigned even = c % 2 == 0 ? c : c + 1;
      CHECK(fp8_code(f, mid) == even);
      CHECK(fp8_code(f, -mid) == (0x80u | even));
      CHECK(fp8_code(f, std::nextafter(mid, 0.0)) == c);
      CHECK(fp8_code(f, std::nextafter(mid, INFINITY)) == c + 1);
    }
  }
  // In the subnormal range, by hand: 2^-10 lies halfway between 0 and 2^-9 (E4M3FN's
  // smallest); 3 * 2^-10 between codes 1 and 2.
  CHECK(fp8_code(Fp8::e4m3fn, std::ldexp(1.0, -10)) == 0x00);
  CHECK(fp8_code(Fp8::e4m3fn, std::ldexp(3.0, -10)) == 0x02);
  CHECK(fp8_code(Fp8::e4m3fn, std::ldexp(1.0, -10) * 1.0000001) == 0x01);
  CHECK(fp8_code(Fp8::e4m3fn, -1e-30) == 0x80);  // rounds to -0
  CHECK(fp8_code(Fp8::e4m3fn, -0.0) == 0x80);
  CHECK(fp8_code(Fp8::e5m2, std::ldexp(1.0, -17)) == 0x00);
  CHECK(fp8_code(Fp8::e5m2, std::ldexp(1.0, -17) * 1.0000001) == 0x01);
}

TEST_CASE("FP8 encoding past the largest value: NaN / infinity, or saturation") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // E4M3FN: 464 is halfway between 448 (0x7E, mantissa 110: even) and 480, which the format
  // does not have: it rounds to 448. Above, the value rounds past 448: NaN, or 448 saturated.
  CHECK(fp8_code(Fp8::e4m3fn, 464.0) == 0x7E);
  CHECK(fp8_code(Fp8::e4m3fn, std::nextafter(464.0, INFINITY)) == 0x7F);
  CHECK(fp8_code(Fp8::e4m3fn, std::nextafter(464.0, INFINITY), kSat) == 0x7E);
  CHECK(fp8_code(Fp8::e4m3fn, -1e9) == 0xFF);
  CHECK(fp8_code(Fp8::e4m3fn, -1e9, kSat) == 0xFE);
  CHECK(fp8_code(Fp8::e4m3fn, INFINITY) == 0x7F);
  CHECK(fp8_code(Fp8::e4m3fn, INFINITY, kSat) == 0x7E);
  CHECK(fp8_code(Fp8::e4m3fn, -INFINITY, kSat) == 0xFE);
  CHECK(fp8_code(Fp8::e4m3fn, nan) == 0x7F);
  CHECK(fp8_code(Fp8::e4m3fn, nan, kSat) == 0x7F);  // saturation keeps NaN
  CHECK(fp8_code(Fp8::e4m3fn, -nan) == 0xFF);
  // E5M2: 61440 is halfway between 57344 (mantissa 11: odd) and 65536 (even): infinity.
  CHECK(fp8_code(Fp8::e5m2, std::nextafter(61440.0, 0.0)) == 0x7B);
  CHECK(fp8_code(Fp8::e5m2, 61440.0) == 0x7C);
  CHECK(fp8_code(Fp8::e5m2, 61440.0, kSat) == 0x7B);
  CHECK(fp8_code(Fp8::e5m2, -INFINITY) == 0xFC);
  CHECK(fp8_code(Fp8::e5m2, -INFINITY, kSat) == 0xFB);
  CHECK(fp8_code(Fp8::e5m2, nan) == 0x7E);
}

TEST_CASE("FP8 tensors: one byte an element, read and written through the format") {
  Tensor t("k", DType::f8e4m3fn, {4}, Role::input);
  CHECK(t.bytes().size() == 4);
  const std::vector<double> v{1.0, -448.0, 0.3, 1000.0};
  t.set_range(0, 4, v.data());
  CHECK(t.bits(0) == 0x38);
  CHECK(t.bits(1) == 0xFE);
  CHECK(t.get(2) == 0.3125);    // 0.3 = 1.2 * 2^-2: 1.25 * 2^-2 is nearest (step 2^-5)
  CHECK(std::isnan(t.get(3)));  // `.to(float8_e4m3fn)`: past 464, NaN
  Tensor u("v", DType::f8e5m2, {2}, Role::input);
  const std::vector<double> w{0.3, 1e6};
  u.set_range(0, 2, w.data());
  CHECK(u.get(0) == 0.3125);  // 0.3 between 0.25 and 0.3125 (step 2^-4 in [0.25, 0.5)): nearer 0.3125
  CHECK(u.get(1) == INFINITY);
}

TEST_CASE("FP8 tensors: a range of every code reads each code's value, bit for bit") {
  // get_range decodes a range at a time (the golden path), get and fp8_value one element.
  for (const auto& [dtype, format] :
       {std::pair{DType::f8e4m3fn, Fp8::e4m3fn}, std::pair{DType::f8e5m2, Fp8::e5m2}}) {
    Tensor t("k", dtype, {256}, Role::input);
    for (unsigned c = 0; c < 256; ++c) t.bytes()[c] = static_cast<uint8_t>(c);
    std::vector<double> values(256);
    t.get_range(0, 256, values.data());
    for (unsigned c = 0; c < 256; ++c) {
      CAPTURE(c);
      CHECK(std::bit_cast<uint64_t>(values[c]) == std::bit_cast<uint64_t>(fp8_value(format, c)));
      CHECK(same(values[c], ofp8_formula(c, format == Fp8::e4m3fn ? 4 : 5, format == Fp8::e4m3fn ? 3 : 2,
                                         format == Fp8::e4m3fn ? 7 : 15, format == Fp8::e5m2)));
    }
    // Ranges that start and end anywhere: the vectorized decoder's head, body and tail.
    Tensor u("k", dtype, {320}, Role::input);
    for (unsigned i = 0; i < 320; ++i) u.bytes()[i] = static_cast<uint8_t>((i * 37u + 11u) % 256u);
    size_t wrong = 0;
    for (size_t begin = 0; begin < 33; ++begin)
      for (size_t n : {size_t{1}, size_t{7}, size_t{31}, size_t{64}, size_t{287}}) {
        std::vector<double> got(n);
        u.get_range(begin, n, got.data());
        for (size_t i = 0; i < n; ++i)
          wrong += std::bit_cast<uint64_t>(got[i]) !=
                   std::bit_cast<uint64_t>(fp8_value(format, u.bytes()[begin + i]));
      }
    CHECK(wrong == 0);
  }
}
