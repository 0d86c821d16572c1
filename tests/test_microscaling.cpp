// The block-scaled quantizers (src/ref/microscaling.hpp) on blocks whose codes are derived by
// hand here from the definitions (specs/quantize-group.md), the small floats against OCP MX
// v1.0's value tables, and the group operators' refusals of what the formats fix.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "case_helpers.hpp"
#include "core/float_format.hpp"
#include "ref/microscaling.hpp"

using namespace kvbench;

namespace {

MxElement small(SmallFloat f) {
  MxElement e;
  e.kind = MxElement::Kind::small_float;
  e.small = f;
  return e;
}

std::vector<double> magnitudes(SmallFloat f) {
  std::set<double> m;
  for (unsigned c = 0; c < (1u << small_float_layout(f).bits()); ++c)
    m.insert(std::fabs(small_float_value(f, c)));
  return {m.begin(), m.end()};
}

}  // namespace

TEST_CASE("small floats: the value tables of OCP MX v1.0 (E2M1, E2M3, E3M2)") {
  // E2M1: the eight magnitudes the specification lists.
  CHECK(magnitudes(SmallFloat::e2m1) == std::vector<double>{0, 0.5, 1, 1.5, 2, 3, 4, 6});
  // E2M3: subnormals k/8, normals 1..7.5 in steps of 1/8 (binade 1), 1/4 (2), 1/2 (4).
  std::vector<double> e2m3;
  for (int k = 0; k < 8; ++k) e2m3.push_back(k / 8.0);
  for (int e = 0; e < 3; ++e)
    for (int m = 0; m < 8; ++m) e2m3.push_back(std::ldexp(1 + m / 8.0, e));
  CHECK(magnitudes(SmallFloat::e2m3) == e2m3);
  // E3M2: subnormals k/16, normals 0.25 .. 28 (binades 2^-2 .. 2^4, four mantissas each).
  std::vector<double> e3m2;
  for (int k = 0; k < 4; ++k) e3m2.push_back(k / 16.0);
  for (int e = -2; e <= 4; ++e)
    for (int m = 0; m < 4; ++m) e3m2.push_back(std::ldexp(1 + m / 4.0, e));
  CHECK(magnitudes(SmallFloat::e3m2) == e3m2);
  // Codes: sign in the top bit, -0 is its own code; bits past the width are no code.
  CHECK(small_float_code(SmallFloat::e2m3, -0.0) == 0x20);
  CHECK(std::signbit(small_float_value(SmallFloat::e2m3, 0x20)));
  CHECK(small_float_value(SmallFloat::e2m3, 0x1F) == 7.5);
  CHECK(std::isnan(small_float_value(SmallFloat::e2m3, 0x40)));
  CHECK(small_float_layout(SmallFloat::e3m2).emax() == 4);
  CHECK(small_float_layout(SmallFloat::e2m3).emax() == 2);
}

TEST_CASE("small floats: nearest, ties to the even code, saturating, on every midpoint") {
  for (const SmallFloat f : {SmallFloat::e2m1, SmallFloat::e1m2, SmallFloat::e2m3, SmallFloat::e3m2}) {
    const std::vector<double> m = magnitudes(f);
    for (size_t k = 0; k + 1 < m.size(); ++k) {
      const double mid = (m[k] + m[k + 1]) / 2;
      // Codes of magnitudes ascend with the magnitude, so the even code is the even index.
      const double even = k % 2 == 0 ? m[k] : m[k + 1], odd = k % 2 == 0 ? m[k + 1] : m[k];
      CHECK(small_float_value(f, small_float_code(f, mid)) == even);
      CHECK(small_float_value(f, small_float_code(f, -mid)) == -even);
      CHECK(small_float_value(f, small_float_code_away(f, mid)) == m[k + 1]);
      CHECK(small_float_value(f, small_float_code(f, std::nextafter(mid, 0.0))) == m[k]);
      CHECK(small_float_value(f, small_float_code(f, std::nextafter(mid, 99.0))) == m[k + 1]);
      (void)odd;
    }
    CHECK(small_float_value(f, small_float_code(f, 1e30)) == m.back());
    CHECK(small_float_value(f, small_float_code(f, -INFINITY)) == -m.back());
  }
}

TEST_CASE("quantize_mx: the shared exponent floor(log2 amax) - emax_elem, codes by hand") {
  CHECK(mx_shared_exponent(1.0, 2) == -2);
  CHECK(mx_shared_exponent(0.99, 2) == -3);
  CHECK(mx_shared_exponent(0.0, 2) == -127);  // 2^-126 counted, minus 2, held at -127
  CHECK(mx_shared_exponent(0.0, 0) == -126);  // MXINT8 (microxcaling gives 0x01 there)
  CHECK(mx_shared_exponent(0x1p-140, 8) == -127);

  GroupCodes g;
  // E2M1, amax 6: X = 2^(2 - 2) = 1. 2.5 ties 2 (code 4, even) and 3: 2, the away code 3.
  const double x[] = {6, 2.5, 5, -0.25, 0.75, -1.75};
  quantize_mx(x, 6, small(SmallFloat::e2m1), g);
  CHECK(g.scale == 1);
  CHECK(g.code == std::vector<double>{6, 2, 4, -0.0, 1, -2});
  CHECK(g.alternate[1] == 3);
  CHECK(g.alternate[2] == 6);
  CHECK(std::isnan(g.alternate[0]));
  CHECK(g.alternate[3] == -0.5);      // -0.25 ties -0 and -0.5
  CHECK(std::isnan(g.alternate[4]));  // 0.75 ties 0.5 and 1 (code 2, even): 1 either way
  CHECK(std::signbit(g.code[3]));

  // MXFP8 E4M3, amax 486.4: floor(log2) 8 - 8 = 0, X = 1; 486.4 rounds to 480 and saturates.
  MxElement e4;
  e4.kind = MxElement::Kind::fp8;
  const double big[] = {486.4, -0.1};
  quantize_mx(big, 2, e4, g);
  CHECK(g.scale == 1);
  CHECK(g.code[0] == 448);
  CHECK(g.code[1] == fp8_value(Fp8::e4m3fn, fp8_code(Fp8::e4m3fn, -0.1)));

  // MXINT8, amax 1: X = 2^(0 - 0) = 1, codes rne(64 x): 1/128 ties 0 and 1.
  MxElement i8;
  i8.kind = MxElement::Kind::int8;
  const double ints[] = {1, 1.0 / 128, -1.99, 3.0 / 128};
  quantize_mx(ints, 4, i8, g);
  CHECK(g.scale == 1);
  CHECK(g.code == std::vector<double>{64, 0, -127, 2});
  CHECK(g.alternate[1] == 1);
  CHECK(std::isnan(g.alternate[3]));  // 64 * 3 / 128 = 1.5 ties 1 and 2: rne 2, away 2

  // The fault: one too large, every code halved (2^-1 where the block needed 2^-2).
  const double ones[] = {1, 0.5};
  quantize_mx(ones, 2, small(SmallFloat::e2m1), g, {.exponent_plus_one = true});
  CHECK(g.scale == 0.5);
  CHECK(g.code == std::vector<double>{2, 1});
}

TEST_CASE("quantize_nvfp4: block scale e4m3(gs * amax / 6), codes e2m1(x * gs / sf)") {
  GroupCodes g;
  const double x[] = {3, -1.5, 0.2, 0};
  // gs = 2: sf = e4m3(2 * 3 / 6) = 1, codes e2m1(2 x): 6, -3, 0.4 -> 0.5, 0.
  quantize_nvfp4(x, 4, 2.0, g);
  CHECK(g.scale == 1);
  CHECK(g.code == std::vector<double>{6, -3, 0.5, 0});
  // gs = 448 * 6 / 3 = 896: sf = 448, codes x * 896 / 448 = 2x, as before.
  quantize_nvfp4(x, 4, 896.0, g);
  CHECK(g.scale == 448);
  CHECK(g.code == std::vector<double>{6, -3, 0.5, 0});
  // A block too small for any scale: sf = 0, codes x * 0 (signed zeros).
  const double tiny[] = {1e-9, -1e-9};
  quantize_nvfp4(tiny, 2, 1.0, g);
  CHECK(g.scale == 0);
  CHECK(std::signbit(g.code[1]));
  // The fault: gs dropped, sf = e4m3(3 / 6) = 0.5, codes x / 0.5.
  quantize_nvfp4(x, 4, 896.0, g, {.global_scale_dropped = true});
  CHECK(g.scale == 0.5);
  CHECK(g.code == std::vector<double>{6, -3, 0.5, 0});
}

TEST_CASE("QuantizeGroup and DequantizeGroup refuse what a format fixes, naming the field") {
  const std::string q =
      R"({"op": "kvbench.QuantizeGroup", "name": "t", "seed": 1, "shapes": {"rows": 2, "length": 64}, )";
  CHECK(rejection(q + R"("attributes": {"code_format": "mxfp4_e2m1", "group_size": 16}})") ==
        "/attributes/group_size: mxfp4_e2m1 blocks are 32 elements: group_size 32");
  CHECK(rejection(q + R"("attributes": {"code_format": "nvfp4", "bits": 8}})") ==
        "/attributes/bits: nvfp4 codes are 4 bits wide: bits 4");
  CHECK(rejection(q + R"("attributes": {"code_format": "mxfp6_e3m2", "with_zero_point": true}})") ==
        "/attributes/with_zero_point: mxfp6_e3m2 codes take a scale only: with_zero_point false");
  CHECK(rejection(q + R"("attributes": {"code_format": "int", "bits": 6, "group_size": 8}})") ==
        "/attributes/bits: integer codes are 4 or 8 bits wide");
  CHECK(rejection(q + R"("attributes": {"code_format": "mxint8"}, "dtypes": {"scale": "f32"}})")
            .find("/dtypes/scale") == 0);
  CHECK(rejection(q + R"("attributes": {"code_format": "hif8"}})") ==
        "/attributes/group_size: code_format hif8 needs group_size");
  CHECK(rejection(q + R"("attributes": {"code_format": "mxfp8_e5m2"}})") == "");
  const std::string d =
      R"({"op": "kvbench.DequantizeGroup", "name": "t", "seed": 1, "shapes": {"rows": 2, "length": 64}, )";
  CHECK(rejection(d + R"("attributes": {"code_format": "mxfp8_e4m3", "formula": "ppl"}})") ==
        "/attributes/formula: MX and NVFP4 codes dequantize by formula onednn: y = f32(value * scale)");
  CHECK(rejection(d + R"("attributes": {"code_format": "nvfp4", "formula": "onednn"}})") == "");
}
