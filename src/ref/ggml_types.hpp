#pragma once
// ggml's tensor types as llama.cpp stores a KV cache (specs/ggml.md "Types"): f32, f16 and
// bf16 elements, and the blocks of 32 elements of q8_0, q4_0, q4_1, q5_0, q5_1 and iq4_nl,
// byte for byte as ggml/src/ggml-common.h lays them out. The codecs are those of
// ggml/src/ggml-quants.c (`quantize_row_*_ref`, `dequantize_row_*`), written from that
// source: every step in f32 as it computes it, so the bytes agree.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"

namespace kvbench {

enum class GgmlType { f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl };

struct GgmlTypeInfo {
  GgmlType type;
  const char* name;     // ggml's name, as case files write it
  int64_t block;        // elements per block (1 for f32, f16, bf16)
  int64_t block_bytes;  // bytes per block
  DType dtype;          // the kvbench dtype a tensor of the type is stored as (u8: bytes of blocks)
};

const GgmlTypeInfo& ggml_type_info(GgmlType t);
std::optional<GgmlType> parse_ggml_type(std::string_view name);
// Every type's name, in the order above.
std::vector<std::string> ggml_type_names();
inline bool ggml_is_quantized(GgmlType t) { return ggml_type_info(t).block > 1; }
// A row of `cols` elements: its size in the tensor's last dimension (elements, or bytes of
// blocks). cols must be a multiple of the block.
int64_t ggml_row_width(GgmlType t, int64_t cols);
// The bytes of such a row.
int64_t ggml_row_bytes(GgmlType t, int64_t cols);

// ggml's f32 -> f16 (round to nearest even; GGML_FP32_TO_FP16) and f32 -> bf16 (nearest
// even, a NaN made quiet; ggml_compute_fp32_to_bf16), as bits.
uint16_t ggml_f16_bits(float x);
uint16_t ggml_bf16_bits(float x);

// quantize_row_q8_0_ref's scale of a block of 32 values: d = amax / 127 in f32 (stored as
// its f16 rounding; the codes are round(x * (1 / d)) with this f32 d).
float ggml_q8_0_scale(const float* block);

// quantize_row_<type>_ref of one row of `cols` f32 values into its blocks (block types only).
void ggml_quantize_row(GgmlType t, const float* x, uint8_t* out, int64_t cols);
// dequantize_row_<type> of one row of blocks: each value as ggml's f32 result.
void ggml_dequantize_row(GgmlType t, const uint8_t* in, double* y, int64_t cols);

// The largest |element| of a block type's row as ggml dequantizes it that a code may
// reach, per block: what an f16 dequantization's rounding is relative to (the golden's
// K~ and V~ bounds): |d| * max|code| + |m|.
double ggml_block_magnitude(GgmlType t, const uint8_t* block);

}  // namespace kvbench
