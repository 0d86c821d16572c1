// Double-precision group quantization reference (src/ref/quant.hpp), checked against
// values derived by hand from the formulas in quant.hpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/float_format.hpp"
#include "core/rng.hpp"
#include "ref/quant.hpp"

using namespace kvbench;

namespace {

// The f16 scale of a group whose max |x| is 1.0 with qmax 127:
//   1/127 = 2^-7 * 128/127 = 2^-7 * 1.007874...; the 10-bit mantissa field is
//   0.007874 * 1024 = 8.063 -> 8 (round to nearest), so
//   s = 2^-7 * (1 + 8/1024) = 1032 / 2^17 = 129 / 16384 = 0.00787353515625 (bits 0x2008).
constexpr double kScaleOf1 = 129.0 / 16384.0;

// One f16 ulp at v (v first rounded to f16): 2^-24 below 2^-14, else 2^(floor(log2|v|) - 10).
double ulp16(double v) {
  const double a = std::fabs(round_f16(v));
  if (a < 0x1p-14) return 0x1p-24;
  return std::ldexp(1.0, std::ilogb(a) - 10);
}

}  // namespace

TEST_CASE("PPL symmetric int8/f16: scale and codes of {1, -0.5, 0.25, 0}") {
  const double x[] = {1.0, -0.5, 0.25, 0.0};
  const GroupCodes g = quantize_symmetric(x, 4, 127, DType::f16);
  CHECK(g.scale == kScaleOf1);
  CHECK(f16_bits_from_double(g.scale) == 0x2008);
  REQUIRE(g.code.size() == 4);
  // 1/s = 16384/129 = 127.0078; f16 ulp in [64,128) is 1/16 -> 127.0 -> code 127.
  CHECK(g.code[0] == 127);
  // -0.5/s = -8192/129 = -63.5039; f16 ulp in [32,64) is 1/32 -> -63.5 (an exact tie in f16)
  // -> RNE -> -64. The code would flip to -63 only below the f16 midpoint -63.484375,
  // 0.0195 (relative 3e-4, far more than the 2^-20 window) away: no alternate.
  CHECK(g.code[1] == -64);
  CHECK(std::isnan(g.alternate[1]));
  // 0.25/s = 4096/129 = 31.7519; f16 ulp in [16,32) is 1/64 -> 31.75 -> 32; far from 31.5.
  CHECK(g.code[2] == 32);
  CHECK(std::isnan(g.alternate[2]));
  CHECK(g.code[3] == 0);
  CHECK(std::isnan(g.alternate[0]));
  CHECK(std::isnan(g.alternate[3]));
}

TEST_CASE("PPL symmetric: an all-zero group takes the scale floor fp16(1e-5)") {
  // 1e-5 < 2^-14, so it is an f16 subnormal: 1e-5 / 2^-24 = 167.77 -> 168;
  // 168 * 2^-24 = 1.0013580322265625e-05.
  const double x[] = {0.0, 0.0, 0.0};
  const GroupCodes g = quantize_symmetric(x, 3, 127, DType::f16);
  CHECK(g.scale == 168.0 * 0x1p-24);
  CHECK(g.scale == 1.0013580322265625e-05);
  for (double c : g.code) CHECK(c == 0);
}

TEST_CASE("PPL symmetric: the code follows RNE of the f16 quotient, not of the exact quotient") {
  // Found by a one-off brute-force search over f16 x in (0, 1) with the group max 1.0
  // (scale 129/16384): x = 0.783203125 (f16 0x3A44 = (1 + 580/1024) / 2).
  //   exact x/s = 0.783203125 * 16384 / 129 = 12832 / 129 = 99.4729...  -> rne = 99
  //   fp16(x/s): ulp in [64,128) is 1/16; 99.4729 is nearer 99.5 (0.027) than 99.4375
  //   (0.035), so fp16(x/s) = 99.5, a tie, and RNE gives the even 100.
  // PPL rounds the quotient to f16 before rounding to an integer, so the code is 100. The
  // code flips to 99 only below the f16 midpoint 99.46875, 0.004 away (relative 4e-5, well
  // outside the 2^-20 boundary window): a kernel that skips the f16 rounding gets 99 and fails.
  const double x[] = {1.0, 0.783203125};
  CHECK(std::nearbyint(x[1] / kScaleOf1) == 99);  // the double-only rounding differs
  const GroupCodes g = quantize_symmetric(x, 2, 127, DType::f16);
  REQUIRE(g.scale == kScaleOf1);
  CHECK(g.code[1] == 100);
  CHECK(std::isnan(g.alternate[1]));
}

TEST_CASE("symmetric f32: an exact half-integer quotient rounds to even and offers the other neighbour") {
  // max 127 -> s = f32(127 / 127) = 1, so x / s = x exactly. 2.5 and -2.5 are ties: RNE
  // gives 2 and -2; 3.5 gives 4. Moving the quotient by 2^-20 either way reaches the other
  // neighbour, which is the alternate. 1.25 is far from any boundary.
  const double x[] = {127.0, 2.5, 3.5, -2.5, 1.25};
  const GroupCodes g = quantize_symmetric(x, 5, 127, DType::f32);
  CHECK(g.scale == 1.0);
  CHECK(g.code == std::vector<double>{127, 2, 4, -2, 1});
  CHECK(g.alternate[1] == 3);
  CHECK(g.alternate[2] == 3);
  CHECK(g.alternate[3] == -3);
  CHECK(std::isnan(g.alternate[4]));
}

TEST_CASE("symmetric with qmax 7 (int4): codes stay within [-7, 7]") {
  const double x[] = {3.5, -3.5, 1.0, -0.2};
  const GroupCodes g = quantize_symmetric(x, 4, 7, DType::f16);
  CHECK(g.scale == 0.5);                              // 3.5 / 7 = 0.5 exactly
  CHECK(g.code == std::vector<double>{7, -7, 2, 0});  // 1.0/0.5 = 2, -0.2/0.5 = -0.4 -> 0
  const CounterRng rng(3, "int4");
  for (uint64_t grp = 0; grp < 50; ++grp) {
    std::vector<double> v(16);
    for (size_t i = 0; i < v.size(); ++i) v[i] = round_f16(rng.uniform(grp * 16 + i, -9, 9));
    const GroupCodes q = quantize_symmetric(v.data(), v.size(), 7, DType::f16);
    for (double c : q.code) {
      CHECK(c >= -7);
      CHECK(c <= 7);
      CHECK(c == std::floor(c));
    }
  }
}

TEST_CASE("asymmetric u8 on {0, 1, 2, 3} with f32 compute") {
  // hi - lo = 3; 3/255 = 1/85 = 2^-7 * 128/85; the 24-bit significand is 2^30/85 =
  // 12632256.75 -> 12632257, so s = 12632257 * 2^-30 (f32 bits 0x3C40C0C1), slightly above 1/85.
  // zp = rne(0 - f32(0/s)) = 0.
  // 1/s = 84.9999983: f32 ulp at 85 is 2^-17 = 7.6e-6, the gap 1.7e-6 < half of it -> 85.0 -> 85
  // 2/s = 169.9999967: ulp 2^-16 -> 170.0 -> 170;  3/s = 254.999995: ulp 2^-16 -> 255.
  const double x[] = {0, 1, 2, 3};
  const GroupCodes g = quantize_asymmetric(x, 4, 0, 255, DType::f32);
  CHECK(g.scale == 12632257.0 * 0x1p-30);
  CHECK(f32_bits_from_double(g.scale) == 0x3C40C0C1u);
  CHECK(g.zero_point == 0);
  CHECK(g.code == std::vector<double>{0, 85, 170, 255});
}

TEST_CASE("dequantization formulas of the three families") {
  CHECK(dequant_ppl(3, 0.5, DType::f16, DType::f16) == 1.5);
  CHECK(dequant_zero_point(10, 8, 0.25, DType::f32) == 0.5);  // (10 - 8) * 0.25
  CHECK(dequant_offset(-3, 1.5, 2, DType::f32) == -3.0);      // (-3 + 1.5) * 2
  // The PPL product is rounded in the scale dtype: 2049 * 2^-11 = 1 + 2^-11 is a tie
  // between 1.0 and 1 + 2^-10 in f16 and rounds to the even 1.0, even with an f32 output.
  CHECK(dequant_ppl(2049, 0x1p-11, DType::f16, DType::f32) == 1.0);
}

TEST_CASE("round trips stay within half a scale step plus the f16 roundings") {
  // Error budget, in double, for one element x of a group with f16 scale s:
  //   code  = rne(fp16(x/s)): |fp16(x/s) - x/s| <= ulp16(x/s)/2, then rne adds <= 1/2, so
  //           |code - x/s| <= 1/2 + ulp16(x/s)/2  (the extra half ulp is case (c) above);
  //   value = fp16(code * s): the product of an integer and an f16 is rounded once more,
  //           <= ulp16(product)/2.
  //   => |value - x| <= s/2 + s * ulp16(x/s)/2 + ulp16(product)/2.
  // (The plainer "s/2 + one ulp of the product" does not hold in general: when the f16
  // quotient rounds onto a tie, s*ulp16(x/s)/2 can exceed ulp16(product)/2, so the two
  // half-ulps add up to more than one ulp; an independent Python model finds such cases.)
  // Asymmetric adds one case: the element at the top can be clamped to qmax, since s is
  // rounded (hi-lo)/s <= 255/(1 - 2^-11) < 255.125 and zp is rounded (<= 1/2 + 1/16 off);
  // then |code - zp - x/s| <= 0.125 + 0.5 + 0.0625 = 0.6875.
  const CounterRng rng(2024, "groups");
  uint64_t k = 0;
  int checked = 0;
  for (int grp = 0; grp < 200; ++grp) {
    const size_t n = static_cast<size_t>(rng.integer(k++, 1, 64));
    std::vector<double> x(n);
    for (auto& v : x) v = round_f16(rng.uniform(k++, -4.0, 4.0));

    const GroupCodes sym = quantize_symmetric(x.data(), n, 127, DType::f16);
    const double s = sym.scale;
    for (size_t i = 0; i < n; ++i) {
      const double product = sym.code[i] * s;
      const double y = dequant_ppl(sym.code[i], s, DType::f16, DType::f16);
      const double bound = s / 2 + s * ulp16(x[i] / s) / 2 + ulp16(product) / 2;
      CHECK_MESSAGE(std::fabs(y - x[i]) <= bound,
                    "sym group " << grp << " x=" << x[i] << " code=" << sym.code[i]);
      ++checked;
    }

    const GroupCodes asym = quantize_asymmetric(x.data(), n, 0, 255, DType::f16);
    const double sa = asym.scale;
    const double zp = static_cast<double>(asym.zero_point);
    for (size_t i = 0; i < n; ++i) {
      const double product = (asym.code[i] - zp) * sa;
      const double y = dequant_zero_point(asym.code[i], zp, sa, DType::f16);
      double bound = sa / 2 + sa * ulp16(x[i] / sa) / 2 + ulp16(product) / 2;
      if (asym.code[i] == 255) bound = std::max(bound, 0.6875 * sa + ulp16(product) / 2);
      CHECK_MESSAGE(std::fabs(y - x[i]) <= bound,
                    "asym group " << grp << " x=" << x[i] << " code=" << asym.code[i]);
    }
  }
  CHECK(checked > 200);
}
