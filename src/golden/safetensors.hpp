#pragma once
// Minimal safetensors reader and writer (https://github.com/huggingface/safetensors):
// an 8-byte little-endian header length, a JSON header mapping each tensor name to
// {dtype, shape, data_offsets} (plus "__metadata__": string -> string), then the data.
// kvbench writes tensors in name order with the header padded to 8 bytes by spaces, so
// the same tensors always give the same bytes.
//
// Files from other backends are untrusted: the header is checked whole against the file's
// size before any tensor is read (known dtype, bytes = elements x element size, offsets
// inside the data, no two tensors overlapping), and each tensor is read only when asked.
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.hpp"
#include "core/file_io.hpp"

namespace kvbench {

// The largest header accepted (the safetensors reference implementation's limit, 100 MB).
inline constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;
// Deepest nesting of a valid header: root object > tensor object > shape array.
inline constexpr int kMaxSafetensorsHeaderDepth = 3;

struct StoredTensor {
  std::string dtype;  // safetensors dtype: F64, F32, F16, BF16, I64, I32, I8, U8
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  // For writing only: when set, the data is these bytes (owned by a Tensor that outlives
  // the write), not `bytes`, so a golden's large inputs are written without a copy.
  std::span<const uint8_t> borrowed;
  std::span<const uint8_t> data() const {
    return borrowed.data() ? borrowed : std::span<const uint8_t>(bytes);
  }
};

struct SafetensorsFile {
  std::map<std::string, StoredTensor> tensors;
  std::map<std::string, std::string> metadata;
};

// A tensor's header entry; [begin, end) are offsets into the data section.
struct TensorEntry {
  std::string dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

// A checked header: where the data section starts and every tensor's entry.
struct SafetensorsIndex {
  uint64_t data_start = 0;
  std::map<std::string, TensorEntry> tensors;
  std::map<std::string, std::string> metadata;
};

// Reads `bytes.size()` bytes at an offset of the file; throws when they are not there.
using ReadAt = std::function<void(uint64_t offset, std::span<uint8_t> bytes)>;

// Reads and checks the length and header of a safetensors file of `file_size` bytes.
// Every error is a FileError starting with `where` (and naming the tensor at fault).
SafetensorsIndex index_safetensors(uint64_t file_size, const ReadAt& read, const std::string& where);
// The bytes of one indexed tensor.
std::vector<uint8_t> read_tensor_bytes(const SafetensorsIndex& index, const TensorEntry& entry,
                                       const ReadAt& read);

// A whole safetensors file held in memory; `where` names it in messages.
SafetensorsFile parse_safetensors(std::span<const uint8_t> bytes, const std::string& where);

// A safetensors file on disk: opened (regular files only) and indexed by the constructor,
// tensors read one at a time.
class SafetensorsReader {
 public:
  explicit SafetensorsReader(const std::string& path);
  const std::string& path() const { return file_.path(); }
  const SafetensorsIndex& index() const { return index_; }
  // The entry of `name`, or nullptr.
  const TensorEntry* find(const std::string& name) const;
  std::vector<uint8_t> read(const TensorEntry& entry) const;
  // The entry's bytes in pieces, in order, mapped rather than copied (for checksums).
  void read_chunks(const TensorEntry& entry, const std::function<void(std::span<const uint8_t>)>& take) const;

 private:
  RegularFile file_;
  SafetensorsIndex index_;
};

// The file's bytes into `out` (not committed: the caller commits it, with others).
void write_safetensors(AtomicFile& out, const SafetensorsFile& file);
// Through a temporary beside `path`, renamed into place; a failed write leaves nothing.
void write_safetensors(const std::string& path, const SafetensorsFile& file);
// Reads every tensor. Throws FileError naming the path (and tensor) and what is wrong.
SafetensorsFile read_safetensors(const std::string& path);

// Bytes per element of a safetensors dtype, 0 for an unknown one.
uint64_t safetensors_element_bytes(std::string_view dtype);

// The safetensors form of a kvbench tensor. s4/u4 have no safetensors dtype: they are
// stored packed as U8 of shape [ceil(numel / 2)] (packing in src/core/dtype.hpp).
StoredTensor to_stored(const Tensor& t);
// The same, borrowing t's bytes (t must outlive the StoredTensor).
StoredTensor stored_view(const Tensor& t);
const char* safetensors_dtype(DType t);
// The stored shape of a tensor of `dtype` and logical `shape` (packed for s4/u4).
Shape stored_shape(DType dtype, const Shape& shape);
// The packing name the manifest gives a dtype: "none", or "s4: two per byte, even index in the low nibble".
std::string packing_name(DType t);

}  // namespace kvbench
