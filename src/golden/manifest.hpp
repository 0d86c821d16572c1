#pragma once
// The manifest of one golden case (<stem>.json, specs/golden-format.md), read and checked
// whole before any data: every field `kvbench check` uses is present with its type, every
// dtype known, every shape a list of sizes, so a corrupt manifest is one clear error.
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/tolerance.hpp"
#include "core/tensor.hpp"

namespace kvbench {

// Limits for manifests: a kvbench manifest is a few KB, nested 4 levels deep.
inline constexpr uint64_t kMaxManifestBytes = 64u << 20;
inline constexpr int kMaxManifestDepth = 32;
// Largest element count of a golden tensor (also keeps every byte count below 2^64).
inline constexpr uint64_t kMaxGoldenElements = uint64_t{1} << 48;

// The newest golden format `check` reads (src/runner/golden_case.hpp kGoldenFormat).
inline constexpr int kReadableGoldenFormat = 5;

// A manifest that cannot be used; `pointer` is the JSON pointer of the field at fault.
class ManifestError : public std::runtime_error {
 public:
  ManifestError(std::string pointer, const std::string& message)
      : std::runtime_error(message), pointer_(std::move(pointer)) {}
  const std::string& pointer() const { return pointer_; }

 private:
  std::string pointer_;
};

// A tensor as the manifest's `tensors` list declares it.
struct ManifestTensor {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  Role role = Role::output;
};

struct ManifestOutput : ManifestTensor {
  std::string expected, expected_f64;
  std::string alternate, touched;  // "" when the manifest has none
  std::string alternate_index;     // format 2: the alternates' flat indices
  // Format 4: the per-element bound (F32, the output's shape) and the flat indices where a
  // NaN is permitted (I64, ascending); "" when the output has none.
  std::string bound, nan_permitted;
  Tolerance tolerance;
};

struct GoldenManifest {
  std::string path;  // the manifest file
  int format = 1;    // the golden format (1: no "format" field)
  std::string name, op, source;
  std::string safetensors;  // the golden data file, beside the manifest
  std::vector<ManifestOutput> outputs;
  std::vector<ManifestTensor> inputs;  // role input: stored in the data file under their names
  nlohmann::json resolved;             // attributes, shapes, inputs, dtypes as the case ran
  // Format 3: the checksum of every tensor of the data file by name (src/golden/checksum.hpp).
  std::map<std::string, std::string> checksums;
};

// The JSON of a manifest file: a regular file of at most kMaxManifestBytes, nested at most
// kMaxManifestDepth deep. Throws ManifestError ("" pointer) naming what is wrong.
nlohmann::json read_manifest_json(const std::string& path);

// Whether a JSON document found in a golden folder claims to be a manifest.
bool looks_like_manifest(const nlohmann::json& doc);

// Checks `doc` (read from `path`) and extracts what `kvbench check` needs.
GoldenManifest parse_manifest(const nlohmann::json& doc, const std::string& path);

}  // namespace kvbench
