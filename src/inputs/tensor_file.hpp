#pragma once
// One tensor of a file a case file names as an input: a .npy (numpy's format: little-endian,
// C order) or a safetensors file (any tensor by name). Only the header is read here, checked
// against the file's size; the data stays on disk until a case loads it.
#include <cstdint>
#include <optional>
#include <string>

#include "core/file_io.hpp"
#include "core/tensor.hpp"

namespace kvbench {

// Which part of a file input is at fault, for the JSON pointer of the error.
enum class FileFault { file, tensor };

// A file that cannot give the tensor: `fault` says whether the file or the tensor name is at fault.
class TensorFileError : public std::runtime_error {
 public:
  TensorFileError(FileFault fault, const std::string& message) : std::runtime_error(message), fault_(fault) {}
  FileFault fault() const { return fault_; }

 private:
  FileFault fault_;
};

struct TensorFileEntry {
  std::string format;          // "npy" or "safetensors"
  std::string stored;          // the file's own name of the element type: "<f4", "F32", ...
  std::optional<DType> dtype;  // the kvbench dtype of that type (none: 16-bit integers, which need "dtype")
  int bits = 0;                // bits per stored element
  Shape shape;
  uint64_t offset = 0, bytes = 0;  // where the data is in the file
};

// The entry of `tensor` in `file` ("" for a .npy, or a safetensors file holding one tensor).
// A .npy is recognised by its magic, a safetensors file by its .safetensors name. Throws
// TensorFileError: a wrong or truncated file, an unknown or unsupported element type,
// Fortran order, a big-endian type, a missing tensor.
TensorFileEntry read_tensor_entry(const RegularFile& file, const std::string& tensor);

// "f32", or the file's own type name where kvbench has no dtype for it.
std::string entry_type_name(const TensorFileEntry& e);

}  // namespace kvbench
