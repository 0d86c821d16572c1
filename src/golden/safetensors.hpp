#pragma once
// Minimal safetensors reader and writer (https://github.com/huggingface/safetensors):
// an 8-byte little-endian header length, a JSON header mapping each tensor name to
// {dtype, shape, data_offsets} (plus "__metadata__": string -> string), then the data.
// kvbench writes tensors in name order with the header padded to 8 bytes by spaces, so
// the same tensors always give the same bytes.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace kvbench {

struct StoredTensor {
  std::string dtype;  // safetensors dtype: F64, F32, F16, BF16, I64, I32, I8, U8
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

struct SafetensorsFile {
  std::map<std::string, StoredTensor> tensors;
  std::map<std::string, std::string> metadata;
};

// Writes atomically enough for our use: to a temporary name, then renamed into place.
void write_safetensors(const std::string& path, const SafetensorsFile& file);
// Throws std::runtime_error naming the path and what is wrong.
SafetensorsFile read_safetensors(const std::string& path);

// The safetensors form of a kvbench tensor. s4/u4 have no safetensors dtype: they are
// stored packed as U8 of shape [ceil(numel / 2)] (packing in src/core/dtype.hpp).
StoredTensor to_stored(const Tensor& t);
StoredTensor f64_stored(const std::vector<double>& values, const Shape& shape);
const char* safetensors_dtype(DType t);
// The packing name the manifest gives a dtype: "none", or "s4: two per byte, even index in the low nibble".
std::string packing_name(DType t);

}  // namespace kvbench
