// ggml's block codecs (src/ref/ggml_types.cpp) on blocks whose bytes are derived by hand
// here from ggml-quants.c's formulas, and the attention sink against a softmax written out.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/float_format.hpp"
#include "ref/attention.hpp"
#include "ref/ggml_types.hpp"

using namespace kvbench;

namespace {
std::vector<float> block_of(std::initializer_list<float> head) {
  std::vector<float> x(32, 0.0f);
  size_t i = 0;
  for (float v : head) x[i++] = v;
  return x;
}
}  // namespace

TEST_CASE("ggml q4_0: d = max / -8 of the signed max, codes (int8)(x / d + 8.5) capped at 15") {
  // amax 8 at x = -8: d = 1, so codes are x + 8.5 truncated: -8 -> 0, 7.9 -> 15 (16 capped),
  // 4.2 -> 12, 0 -> 8; elements 16.. go to the high nibbles.
  std::vector<float> x = block_of({-8, 7.9f, 4.2f});
  x[16] = -3.6f;  // 4.9 -> 4
  uint8_t b[18];
  ggml_quantize_row(GgmlType::q4_0, x.data(), b, 32);
  CHECK(b[0] == 0x00);  // f16 1.0 = 0x3c00, little-endian
  CHECK(b[1] == 0x3c);
  CHECK(b[2] == (0x00 | 4 << 4));  // element 0 low, element 16 high
  CHECK(b[3] == (15 | 8 << 4));
  CHECK(b[4] == (12 | 8 << 4));
  double y[32];
  ggml_dequantize_row(GgmlType::q4_0, b, y, 32);
  CHECK(y[0] == -8);
  CHECK(y[1] == 7);
  CHECK(y[2] == 4);
  CHECK(y[16] == -4);
}

TEST_CASE("ggml q8_0: codes round(x * (1 / d)) half away from zero, with d in f32 and stored in f16") {
  // amax 127: d = 1 (exact in f16), id = 1: 2.5 -> 3, -2.5 -> -3, 0.49 -> 0.
  std::vector<float> x = block_of({127, 2.5f, -2.5f, 0.49f});
  uint8_t b[34];
  ggml_quantize_row(GgmlType::q8_0, x.data(), b, 32);
  CHECK(b[1] == 0x3c);
  CHECK(static_cast<int8_t>(b[2]) == 127);
  CHECK(static_cast<int8_t>(b[3]) == 3);
  CHECK(static_cast<int8_t>(b[4]) == -3);
  CHECK(static_cast<int8_t>(b[5]) == 0);
}

TEST_CASE("ggml q5_1 and q4_1: min and (max - min) / 31 or / 15, the fifth bit in qh") {
  // min -1, max 30: d = 1, m = -1: x = 16 -> (16 + 1) + 0.5 -> 17 = 0b10001: nibble 1, qh bit.
  std::vector<float> x = block_of({-1, 30, 16});
  uint8_t b[24];
  ggml_quantize_row(GgmlType::q5_1, x.data(), b, 32);
  const uint32_t qh = b[4] | b[5] << 8 | b[6] << 16 | static_cast<uint32_t>(b[7]) << 24;
  CHECK((qh & 0x7) == 0x6);    // element 0 (code 0) has no fifth bit; 1 (31) and 2 (17) do
  CHECK((b[8] & 0x0f) == 0);   // code 0
  CHECK((b[9] & 0x0f) == 15);  // 31 & 15
  CHECK((b[10] & 0x0f) == 1);  // 17 & 15
  double y[32];
  ggml_dequantize_row(GgmlType::q5_1, b, y, 32);
  CHECK(y[0] == -1);
  CHECK(y[1] == 30);
  CHECK(y[2] == 16);
  CHECK(y[3] == 0);  // x = 0 -> code 1.5 -> 1: 1 * 1 - 1
}

TEST_CASE("ggml iq4_nl: the nearest table value of x * -127 / max, d refined by least squares") {
  // x = 127 (max) and x = 1: id = -1, so 127 -> -127 (code 0) and 1 -> -1, nearest -10?
  // No: table values -10 and 1 are 11 apart, -1 is 9 from -10 and 2 from 1: code 8 (1).
  std::vector<float> x = block_of({127, 1});
  uint8_t b[18];
  ggml_quantize_row(GgmlType::iq4_nl, x.data(), b, 32);
  CHECK((b[2] & 0x0f) == 0);
  CHECK((b[3] & 0x0f) == 8);
  // d = sum x^2 q x / sum x^2 q^2 over the two nonzero elements (zeros weigh 0):
  // (127^2 * -127 * 127 + 1 * 1 * 1) / (127^2 * 127^2 + 1 * 1) in f32, then f16.
  const float d = (16129.0f * -127.0f * 127.0f + 1.0f) / (16129.0f * 16129.0f + 1.0f);
  CHECK((b[0] | b[1] << 8) == f16_bits_from_double(d));
}

TEST_CASE("ggml bf16: nearest even, a NaN made quiet") {
  CHECK(ggml_bf16_bits(1.0f) == 0x3f80);
  CHECK(ggml_bf16_bits(std::bit_cast<float>(0x3f808000u)) == 0x3f80);  // a tie to even
  CHECK(ggml_bf16_bits(std::bit_cast<float>(0x3f818000u)) == 0x3f82);
  CHECK(ggml_bf16_bits(std::bit_cast<float>(0x7f800001u)) == 0x7fc0);  // signalling NaN -> quiet
}

TEST_CASE("attend: a sink is one more logit without a value row") {
  // Two keys with scores 0 and log 2 (weights 1 and 2), a sink of log 3 (weight 3): the
  // output is (1 * 10 + 2 * 20) / (1 + 2 + 3) = 50 / 6.
  const double q[1] = {1};
  const double k[2] = {0, std::log(2.0)};
  const double v[2] = {10, 20};
  double out = 0;
  const QueryRow row{.q = q, .begin = 0, .end = 2, .out = &out, .sink = std::log(3.0)};
  attend(AttentionBlock{.dk = 1, .dv = 1, .scale = 1}, std::span(&row, 1), RowsView{k, 1}, RowsView{v, 1},
         nullptr);
  CHECK(out == doctest::Approx(50.0 / 6).epsilon(1e-14));
}
