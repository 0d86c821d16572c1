#pragma once
// What the ggml.* operators share (specs/ggml.md): the type attributes, tensors stored in
// a ggml type (elements, or the bytes of its blocks), and their values.
#include <cstdint>
#include <string>
#include <utility>

#include "ops/operator.hpp"
#include "ref/ggml_types.hpp"

namespace kvbench {

// A string attribute naming a ggml type (`allowed`: every type, or those given).
Param ggml_type_param(const std::string& name, const std::string& doc, nlohmann::json fallback = nullptr);
// The type an attribute names.
GgmlType ggml_type_arg(const Args& a, const std::string& key);
// Requires `cols` (the size named `cols_key`) to be a whole number of the type's blocks.
void require_whole_blocks(const Args& a, GgmlType t, int64_t cols, const std::string& cols_key);

// A tensor of rows of `cols` elements in type t: its shape with the last dimension
// ggml_row_width(t, cols).
Shape ggml_shape(GgmlType t, Shape rows_then_cols);

// Fills a tensor of rows of `cols` values in type t: each value uniform in `range` (keyed
// by the seed, the tensor's name and the element's index, as every kvbench input), then
// stored as ggml stores an f32 value: f16/bf16 rounded to nearest even, block types
// quantized by quantize_row_<type>_ref.
void fill_ggml_rows(const Args& a, Tensor& t, GgmlType type, int64_t cols, std::pair<double, double> range);

// Row `row` of such a tensor as ggml reads it into f32 (exact in double).
void ggml_row_values(const Tensor& t, GgmlType type, int64_t cols, int64_t row, double* out);
}  // namespace kvbench
