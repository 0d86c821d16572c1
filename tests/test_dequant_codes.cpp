// Issue 35 step 4: codes to floats without a conversion instruction, and MHCA's
// dequantization as one f16 multiply, proven on the device for every code and scale
// (shaders/dequant_selftest.comp, dequant_f16_selftest.comp; quant.glsl, quant_f16.glsl).
// The expected codes are two's complement by hand here, not the shaders' bit trick.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/float_format.hpp"
#include "f16_products.hpp"
#include "ofp8_formula.hpp"
#include "vk/runtime.hpp"

using namespace kvbench;

namespace {

// A `bits`-bit two's-complement pattern's value: int8 by the cast, int4 by hand.
int code_of(uint32_t pattern, int bits) {
  if (bits == 8) return static_cast<int8_t>(static_cast<uint8_t>(pattern));
  return pattern < 8 ? static_cast<int>(pattern) : static_cast<int>(pattern) - 16;
}

// out[4 i + e]: int8 pattern i in byte e; out[1024 + 8 i + e]: int4 pattern i in nibble e.
size_t wrong_codes(const std::vector<float>& got) {
  size_t wrong = 0;
  for (uint32_t i = 0; i < 256; ++i)
    for (uint32_t e = 0; e < 4; ++e)
      if (got[4 * i + e] != static_cast<float>(code_of(i, 8)) && wrong++ < 5)
        FAIL_CHECK("int8 pattern " << i << " in byte " << e << ": " << got[4 * i + e]);
  for (uint32_t i = 0; i < 16; ++i)
    for (uint32_t e = 0; e < 8; ++e)
      if (got[1024 + 8 * i + e] != static_cast<float>(code_of(i, 4)) && wrong++ < 5)
        FAIL_CHECK("int4 pattern " << i << " in nibble " << e << ": " << got[1024 + 8 * i + e]);
  return wrong;
}

// out[1152 + 4 i + e]: E4M3FN pattern i in byte e, bit for bit (-0 for 0x80), any NaN for NaN.
size_t wrong_fp8_codes(const std::vector<float>& got) {
  size_t wrong = 0;
  for (uint32_t i = 0; i < 256; ++i)
    for (uint32_t e = 0; e < 4; ++e) {
      const float g = got[1152 + 4 * i + e];
      const double want = e4m3_formula(i);  // every E4M3FN value is an f32
      const bool same =
          std::isnan(want) ? std::isnan(g)
                           : std::bit_cast<uint64_t>(static_cast<double>(g)) == std::bit_cast<uint64_t>(want);
      if (!same && wrong++ < 5) FAIL_CHECK("E4M3FN pattern " << i << " in byte " << e << ": " << g);
    }
  return wrong;
}

std::vector<float> download_floats(Buffer& b, size_t n) {
  std::vector<float> v(n);
  b.download(std::span(reinterpret_cast<uint8_t*>(v.data()), n * 4));
  return v;
}

}  // namespace

TEST_CASE(
    "code_float and fp8_code_float: every int8 and E4M3FN code at every byte, every int4 code at every "
    "nibble, exactly") {
  CHECK(code_of(0x80, 8) == -128);  // the expectations themselves
  CHECK(code_of(0x7f, 8) == 127);
  CHECK(code_of(0x8, 4) == -8);
  CHECK(code_of(0xf, 4) == -1);
  CHECK(e4m3_formula(0x01) == std::ldexp(1.0, -9));  // the smallest subnormal
  CHECK(e4m3_formula(0x7e) == 448.0);                // the largest finite value
  CHECK(e4m3_formula(0xb8) == -1.0);
  Runtime rt;
  auto out = rt.buffer(2176 * 4);
  rt.dispatch("dequant_selftest", {{"floats", out.get()}}, {}, 4);
  const std::vector<float> got = download_floats(*out, 2176);
  CHECK(wrong_codes(got) == 0);
  CHECK(wrong_fp8_codes(got) == 0);  // fp8_code_float, FIA's FP8 word loader
}

TEST_CASE("code_pair_f16 and the f16 product: every code, and q * s rounded to f16 for every normal f16 s") {
  Runtime rt;
  if (!rt.info().f16_rte) {
    MESSAGE("SKIP: " << rt.info().name << " has no f16 arithmetic rounding to nearest even");
    return;
  }
  auto codes = rt.buffer(1152 * 4);
  rt.dispatch("dequant_f16_selftest", {{"floats", codes.get()}}, {{"count", 256}, {"op", 0}}, 4);
  CHECK(wrong_codes(download_floats(*codes, 1152)) == 0);

  // 65536 x 256 products; where s is a finite normal f16 (the decode kernel's condition) the
  // f16 product must be f16's rounding of the exact q * s, signed zeros and overflow to inf
  // included.
  auto products = rt.buffer(size_t{65536} * 256 * 4);
  rt.dispatch("dequant_f16_selftest", {{"floats", products.get()}}, {{"count", 65536}, {"op", 1}},
              65536 / 64);
  const std::vector<float> got = download_floats(*products, size_t{65536} * 256);
  // Zero, subnormal, inf and NaN scales take the f32 path in the kernel.
  const ProductCheck r = check_f16_products(
      got, [](uint32_t h) { return (h & 0x7c00) != 0 && (h & 0x7c00) != 0x7c00; }, "f16 product");
  CHECK(r.checked == size_t{61440} * 256);  // 2 x 30 exponents x 1024 mantissas
  CHECK(r.wrong == 0);
}
