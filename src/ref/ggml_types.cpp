#include "ref/ggml_types.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "core/float_format.hpp"

// Every step below is f32 arithmetic in the order ggml-quants.c writes it; the file is
// compiled with -ffp-contract=off (CMakeLists.txt) so that no product and sum fuse.
namespace kvbench {

namespace {

constexpr std::array<GgmlTypeInfo, 9> kTypes{{
    {GgmlType::f32, "f32", 1, 4, DType::f32},
    {GgmlType::f16, "f16", 1, 2, DType::f16},
    {GgmlType::bf16, "bf16", 1, 2, DType::bf16},
    {GgmlType::q8_0, "q8_0", 32, 34, DType::u8},
    {GgmlType::q4_0, "q4_0", 32, 18, DType::u8},
    {GgmlType::q4_1, "q4_1", 32, 20, DType::u8},
    {GgmlType::q5_0, "q5_0", 32, 22, DType::u8},
    {GgmlType::q5_1, "q5_1", 32, 24, DType::u8},
    {GgmlType::iq4_nl, "iq4_nl", 32, 18, DType::u8},
}};

// kvalues_iq4nl (ggml-common.h): the 16 values an iq4_nl code stands for, times its scale.
constexpr std::array<int8_t, 16> kIq4nl{-127, -104, -83, -65, -49, -35, -22, -10,
                                        1,    13,   25,  38,  53,  69,  89,  113};

float f16_value(const uint8_t* p) {
  return static_cast<float>(f16_bits_to_double(static_cast<uint16_t>(p[0] | p[1] << 8)));
}
void put_f16(uint8_t* p, float x) {
  const uint16_t b = ggml_f16_bits(x);
  p[0] = static_cast<uint8_t>(b & 0xff);
  p[1] = static_cast<uint8_t>(b >> 8);
}

// amax and the signed value that has it (the first one, as ggml's strict `<` keeps).
void signed_max(const float* x, float& amax, float& max) {
  amax = 0.0f, max = 0.0f;
  for (int j = 0; j < 32; ++j)
    if (amax < std::fabs(x[j])) amax = std::fabs(x[j]), max = x[j];
}

void min_max(const float* x, float& min, float& max) {
  min = FLT_MAX, max = -FLT_MAX;
  for (int j = 0; j < 32; ++j) {
    if (x[j] < min) min = x[j];
    if (x[j] > max) max = x[j];
  }
}

// Codes lo (elements 0..15) in the low nibbles, hi (16..31) in the high ones.
void pack_nibbles(const uint8_t* codes, uint8_t* qs) {
  for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>((codes[j] & 0x0f) | (codes[j + 16] & 0x0f) << 4);
}
// The fifth bit of each code in qh (element j at bit j), little-endian.
void pack_high_bits(const uint8_t* codes, uint8_t* qh) {
  uint32_t h = 0;
  for (int j = 0; j < 32; ++j) h |= static_cast<uint32_t>((codes[j] & 0x10) >> 4) << j;
  for (int b = 0; b < 4; ++b) qh[b] = static_cast<uint8_t>(h >> (8 * b));
}
int nibble(const uint8_t* qs, int j) { return j < 16 ? qs[j] & 0x0f : qs[j - 16] >> 4; }
int high_bit(const uint8_t* qh, int j) { return (qh[j / 8] >> (j % 8)) & 1; }

int best_index_iq4nl(float x) {
  if (x <= kIq4nl[0]) return 0;
  if (x >= kIq4nl[15]) return 15;
  int ml = 0, mu = 15;
  while (mu - ml > 1) {
    const int mav = (ml + mu) / 2;
    if (x < kIq4nl[mav])
      mu = mav;
    else
      ml = mav;
  }
  return x - kIq4nl[mu - 1] < kIq4nl[mu] - x ? mu - 1 : mu;
}

// One block of each type (quantize_row_<type>_ref's loop body).
void quantize_block(GgmlType t, const float* x, uint8_t* y, uint8_t* iq4_codes) {
  uint8_t codes[32];
  float amax, max, min;
  switch (t) {
    case GgmlType::q8_0: {
      const float d = ggml_q8_0_scale(x), id = d != 0.0f ? 1.0f / d : 0.0f;
      put_f16(y, d);
      for (int j = 0; j < 32; ++j)
        y[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(std::round(x[j] * id)));
      return;
    }
    case GgmlType::q4_0:
    case GgmlType::q5_0: {
      const bool five = t == GgmlType::q5_0;
      signed_max(x, amax, max);
      const float d = max / (five ? -16.0f : -8.0f), id = d != 0.0f ? 1.0f / d : 0.0f;
      put_f16(y, d);
      for (int j = 0; j < 32; ++j) {
        const auto c = static_cast<int8_t>(x[j] * id + (five ? 16.5f : 8.5f));
        codes[j] = static_cast<uint8_t>(std::min<int>(five ? 31 : 15, c));
      }
      if (five) pack_high_bits(codes, y + 2);
      pack_nibbles(codes, y + (five ? 6 : 2));
      return;
    }
    case GgmlType::q4_1:
    case GgmlType::q5_1: {
      const bool five = t == GgmlType::q5_1;
      min_max(x, min, max);
      const float d = (max - min) / (five ? 31.0f : 15.0f), id = d != 0.0f ? 1.0f / d : 0.0f;
      put_f16(y, d);
      put_f16(y + 2, min);
      for (int j = 0; j < 32; ++j) {
        const float v = (x[j] - min) * id + 0.5f;
        codes[j] =
            five ? static_cast<uint8_t>(v) : static_cast<uint8_t>(std::min<int>(15, static_cast<int8_t>(v)));
      }
      if (five) pack_high_bits(codes, y + 4);
      pack_nibbles(codes, y + (five ? 8 : 4));
      return;
    }
    case GgmlType::iq4_nl: {
      // quantize_row_iq4_nl_impl(32, 32, ..., ntry = -1, no importance weights): weights
      // x^2, the codes of d = max / -127 refined once by least squares. A block whose amax
      // is below 1e-15 gets scale 0 and keeps the previous block's codes (ggml's L buffer).
      signed_max(x, amax, max);
      float d = 0.0f;
      if (!(amax < 1e-15f)) {
        d = max / static_cast<float>(kIq4nl[0]);
        const float id = 1 / d;
        float sumqx = 0, sumq2 = 0;
        for (int j = 0; j < 32; ++j) {
          const int l = best_index_iq4nl(id * x[j]);
          iq4_codes[j] = static_cast<uint8_t>(l);
          const float q = kIq4nl[static_cast<size_t>(l)], w = x[j] * x[j];
          sumqx += w * q * x[j];
          sumq2 += w * q * q;
        }
        d = sumq2 > 0 ? sumqx / sumq2 : 0.0f;
      }
      put_f16(y, d);
      pack_nibbles(iq4_codes, y + 2);
      return;
    }
    default: throw std::logic_error("ggml_quantize_row: not a block type");
  }
}

}  // namespace

const GgmlTypeInfo& ggml_type_info(GgmlType t) { return kTypes[static_cast<size_t>(t)]; }

std::optional<GgmlType> parse_ggml_type(std::string_view name) {
  for (const GgmlTypeInfo& i : kTypes)
    if (name == i.name) return i.type;
  return std::nullopt;
}

std::vector<std::string> ggml_type_names() {
  std::vector<std::string> v;
  for (const GgmlTypeInfo& i : kTypes) v.emplace_back(i.name);
  return v;
}

int64_t ggml_row_width(GgmlType t, int64_t cols) {
  const GgmlTypeInfo& i = ggml_type_info(t);
  return i.block == 1 ? cols : cols / i.block * i.block_bytes;
}

int64_t ggml_row_bytes(GgmlType t, int64_t cols) {
  const GgmlTypeInfo& i = ggml_type_info(t);
  return cols / i.block * i.block_bytes;
}

uint16_t ggml_f16_bits(float x) { return f16_bits_from_double(static_cast<double>(x)); }

uint16_t ggml_bf16_bits(float x) {
  const auto u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((u >> 16) | 64);  // NaN: made quiet
  return static_cast<uint16_t>((u + (0x7fff + ((u >> 16) & 1))) >> 16);
}

float ggml_q8_0_scale(const float* block) {
  float amax = 0.0f;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(block[j]));
  return amax / 127;
}

void ggml_quantize_row(GgmlType t, const float* x, uint8_t* out, int64_t cols) {
  const GgmlTypeInfo& info = ggml_type_info(t);
  uint8_t iq4_codes[32] = {};  // ggml's L: carried from block to block within the row
  for (int64_t b = 0; b < cols / info.block; ++b)
    quantize_block(t, x + b * 32, out + b * info.block_bytes, iq4_codes);
}

void ggml_dequantize_row(GgmlType t, const uint8_t* in, double* y, int64_t cols) {
  const GgmlTypeInfo& info = ggml_type_info(t);
  for (int64_t b = 0; b < cols / info.block; ++b) {
    const uint8_t* p = in + b * info.block_bytes;
    double* o = y + b * 32;
    const float d = f16_value(p);
    for (int j = 0; j < 32; ++j) {
      float v = 0;
      switch (t) {
        case GgmlType::q8_0: v = static_cast<float>(static_cast<int8_t>(p[2 + j])) * d; break;
        case GgmlType::q4_0: v = static_cast<float>(nibble(p + 2, j) - 8) * d; break;
        case GgmlType::q4_1: v = static_cast<float>(nibble(p + 4, j)) * d + f16_value(p + 2); break;
        case GgmlType::q5_0:
          v = static_cast<float>((nibble(p + 6, j) | high_bit(p + 2, j) << 4) - 16) * d;
          break;
        case GgmlType::q5_1:
          v = static_cast<float>(nibble(p + 8, j) | high_bit(p + 4, j) << 4) * d + f16_value(p + 2);
          break;
        case GgmlType::iq4_nl:
          v = d * static_cast<float>(kIq4nl[static_cast<size_t>(nibble(p + 2, j))]);
          break;
        default: throw std::logic_error("ggml_dequantize_row: not a block type");
      }
      o[j] = v;
    }
  }
}

double ggml_block_magnitude(GgmlType t, const uint8_t* block) {
  const double d = std::fabs(f16_bits_to_double(static_cast<uint16_t>(block[0] | block[1] << 8)));
  switch (t) {
    case GgmlType::q8_0: return 128 * d;
    case GgmlType::q4_0: return 8 * d;
    case GgmlType::q5_0: return 16 * d;
    case GgmlType::q4_1:
      return 15 * d + std::fabs(f16_bits_to_double(static_cast<uint16_t>(block[2] | block[3] << 8)));
    case GgmlType::q5_1:
      return 31 * d + std::fabs(f16_bits_to_double(static_cast<uint16_t>(block[2] | block[3] << 8)));
    case GgmlType::iq4_nl: return 127 * d;
    default: return 0;
  }
}

}  // namespace kvbench
