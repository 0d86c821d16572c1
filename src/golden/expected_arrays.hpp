#pragma once
// An output's golden in a golden file and back (specs/golden-format.md): expected.<out>,
// expected_f64.<out> in the narrowest float type that holds it, touched.<out> as bits and
// the sparse alternates; read back from formats 1 to 3 into an Expected.
#include <map>
#include <string>

#include "check/expected.hpp"
#include "golden/manifest.hpp"
#include "golden/safetensors.hpp"

namespace kvbench {

// The tensors holding `e`'s golden, by name ("expected.<out>", ...). expected.<out> borrows
// e.value(), and expected_f64.<out> may borrow e.exact() or e.value(): `e` must outlive
// them. Fills the manifest's entries for the side tensors into `out`.
std::map<std::string, StoredTensor> expected_tensors(const Expected& e, nlohmann::json& out);

// The golden of output `o` from a golden data file of `format` (1 to 3), given its
// expected.<out> (load_tensor): every other tensor it needs checked against the manifest's
// dtype and shape, the indices against the tensor's size. Throws std::runtime_error naming
// the file and the tensor.
Expected load_expected(const SafetensorsReader& golden, const ManifestOutput& o, int format, Tensor value);

// The bytes of `key` in `file` once its header entry has the dtype and shape required:
// nothing is read (or allocated) for an entry of the wrong size, or one larger than
// golden_memory_budget(); a failed allocation is rethrown naming the file and the tensor.
// `note` follows the dtype in the message.
std::vector<uint8_t> read_checked(const SafetensorsReader& file, const std::string& key,
                                  const std::string& dtype, const Shape& shape, const std::string& note = "");

// The host memory a golden reader may take for one tensor or one output (check, verify and
// the library): --memory-budget's default, half the physical memory, or the address-space
// limit (ulimit -v) when that is lower. Sizes are held to it before anything is allocated.
uint64_t golden_memory_budget();

// Refuses (std::runtime_error naming `golden`'s file, the output and its expected tensor)
// an output whose check would take more than `budget` bytes of memory, from the manifest's
// shape and dtype alone: its expected and actual values, the doubles of expected_f64 (or an
// in-place output's initial contents and written elements) and its bound.
void check_output_memory(const SafetensorsReader& golden, const ManifestOutput& o, uint64_t budget);

// Tensor `key` of `file` as output `o` (its dtype, logical shape and role).
Tensor load_tensor(const SafetensorsReader& file, const std::string& key, const ManifestTensor& o);

}  // namespace kvbench
