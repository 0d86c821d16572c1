#pragma once
// Inputs from files (specs/case-format.md "Inputs from files"): a case file's
// "inputs": {"NAME": {"file": PATH, "tensor": NAME, "dtype": DTYPE}} is resolved against the
// case file's folder, checked against the tensor the case derives (dtype and shape), scanned
// once (SHA-256 of the file; NaN and Inf of a float tensor) and loaded bit for bit when the
// case makes its tensors.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tensor.hpp"
#include "inputs/tensor_file.hpp"

namespace kvbench {

struct CaseDef;

// What the case file wrote for one input.
struct FileSource {
  std::string key;             // the tensor or `inputs` parameter it gives
  std::string pointer;         // /inputs/<key> (its sweep entry when swept)
  std::string written;         // the path as written
  std::string path;            // where it is: absolute, links resolved
  std::string tensor;          // a safetensors tensor ("": a .npy, or the file's only tensor)
  std::optional<DType> dtype;  // "dtype": the file's elements read as this
};

// `value` ({"file": ..., ...}) of inputs/<key>. Throws CaseError at <pointer>/file for a path
// that leaves the case file's folder tree (unless `allow_outside`: --allow-outside-paths).
FileSource parse_file_source(const CaseDef& def, const std::string& key, const nlohmann::json& value,
                             bool allow_outside);

// The integers in an index parameter's file: a scalar or one dimension of i8, u8, i32 or
// i64, at most `max_count` of them. Throws CaseError at the source's pointer.
std::vector<int64_t> read_index_values(const FileSource& source, uint64_t max_count);

// The tensor a case derives, for the file to match.
struct TensorExpectation {
  DType dtype;
  Shape shape;
};

// A file input checked against its case.
struct FileInput {
  FileSource source;
  std::optional<TensorExpectation> tensor;  // none: the file sets a parameter only (no tensor of its name)
  TensorFileEntry entry;
  uint64_t file_size = 0;
  int64_t modified_ns = 0;
  std::string sha256;         // of the whole file
  uint64_t nan = 0, inf = 0;  // in a float tensor
};

// Opens the source's file, checks its tensor against `expected` (dtype, shape; for s4/u4 the
// packed U8 form of the golden files), and scans it. Every problem is a CaseError at the
// source's pointer: <pointer>/file (the file), <pointer>/tensor (the name), <pointer>/dtype
// (the override) or <pointer> (dtype or shape not the case's, naming both).
FileInput check_file_input(const FileSource& source, const std::optional<TensorExpectation>& expected);

// The file's bytes into `t` (its dtype and shape checked before). Throws std::runtime_error
// when the file changed since it was checked.
void load_file_input(const FileInput& f, Tensor& t);

// " | from files: attenMask=dump/mask.npy, key=dump/l3.safetensors:k_cache (2 NaN, 1 Inf)", or "".
std::string describe_file_inputs(const std::vector<FileInput>& files);
// The manifest's "input_files": per key the file as written, its tensor, SHA-256, bytes, NaN and Inf.
nlohmann::json file_inputs_json(const std::vector<FileInput>& files);

}  // namespace kvbench
