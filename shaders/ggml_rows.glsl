// Elements of rows stored in ggml's types (specs/ggml.md "Types"): f32, f16, bf16 and the
// 32-element blocks of q8_0, q4_0, q4_1, q5_0, q5_1 and iq4_nl, read from a buffer of 32-bit
// words as ggml lays the bytes out. Each value is ggml's f32 dequantization: d * code (exact
// in f32), plus m for q4_1 and q5_1 (one rounding).
#ifndef KVBENCH_GGML_ROWS_GLSL
#define KVBENCH_GGML_ROWS_GLSL

// GgmlType in src/ref/ggml_types.hpp.
const uint GT_F32 = 0u, GT_F16 = 1u, GT_BF16 = 2u, GT_Q8_0 = 3u, GT_Q4_0 = 4u, GT_Q4_1 = 5u, GT_Q5_0 = 6u,
           GT_Q5_1 = 7u, GT_IQ4_NL = 8u;

// Bytes of one block (32 elements) of a block type.
uint ggml_block_bytes(uint type) {
  return type == GT_Q8_0 ? 34u : type == GT_Q4_1 ? 20u : type == GT_Q5_0 ? 22u : type == GT_Q5_1 ? 24u : 18u;
}

const float IQ4NL_VALUES[16] = float[16](-127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0, 1.0, 13.0, 25.0,
                                         38.0, 53.0, 69.0, 89.0, 113.0);

// GGML_ROW_READER(name, buf): float name(uint type, uint row_byte, uint d), element d of the
// row that starts at byte row_byte of buffer buf (uint words).
#define GGML_ROW_READER(name, buf)                                                                \
  uint name##_byte(uint i) { return (buf[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu; }                  \
  uint name##_half(uint i) { return (buf[i >> 2u] >> ((i & 2u) * 8u)) & 0xffffu; }                \
  float name(uint type, uint row_byte, uint d) {                                                  \
    if (type == GT_F32) return uintBitsToFloat(buf[(row_byte >> 2u) + d]);                        \
    if (type == GT_F16) return unpackHalf2x16(name##_half(row_byte + 2u * d)).x;                  \
    if (type == GT_BF16) return uintBitsToFloat(name##_half(row_byte + 2u * d) << 16u);           \
    const uint blk = row_byte + (d / 32u) * ggml_block_bytes(type), j = d % 32u;                  \
    const float scale = unpackHalf2x16(name##_half(blk)).x;                                       \
    if (type == GT_Q8_0) return float(int(name##_byte(blk + 2u + j) << 24u) >> 24) * scale;       \
    const bool two = type == GT_Q4_1 || type == GT_Q5_1, five = type == GT_Q5_0 || type == GT_Q5_1; \
    const uint qs = blk + (two ? 4u : 2u) + (five ? 4u : 0u);                                     \
    const uint byte = name##_byte(qs + j % 16u);                                                  \
    uint code = j < 16u ? byte & 15u : byte >> 4u;                                                \
    if (five) code |= ((name##_byte(blk + (two ? 4u : 2u) + j / 8u) >> (j % 8u)) & 1u) << 4u;      \
    if (type == GT_IQ4_NL) return scale * IQ4NL_VALUES[code];                                     \
    if (!two) return float(int(code) - (five ? 16 : 8)) * scale;                                  \
    precise float v = float(code) * scale + unpackHalf2x16(name##_half(blk + 2u)).x;              \
    return v;                                                                                     \
  }

#endif
