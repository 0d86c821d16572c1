#pragma once
// Checksums of a golden's data (format 3, specs/golden-format.md "Checksums"): the manifest
// records the XXH3-128 of every tensor's bytes, so a golden copied between machines can be
// verified before another backend is judged by it.
#include <cstdint>
#include <map>
#include <span>
#include <string>

namespace kvbench {

struct GoldenManifest;

// The name the manifest gives the algorithm.
inline constexpr const char* kChecksumAlgorithm = "XXH3-128";

// The XXH3-128 of `bytes` as 32 lowercase hex digits, the canonical (big-endian) form that
// xxhsum -H2 and python3-xxhash's xxh3_128().hexdigest() print.
std::string checksum_hex(std::span<const uint8_t> bytes);

// The same over data given in pieces.
class Checksum {
 public:
  Checksum();
  ~Checksum();
  Checksum(const Checksum&) = delete;
  Checksum& operator=(const Checksum&) = delete;
  void update(std::span<const uint8_t> bytes);
  std::string hex() const;

 private:
  void* state_;
};

// Whether `text` is a checksum as the manifest writes it (32 lowercase hex digits).
bool is_checksum_text(const std::string& text);

// Checks the golden's data file against its manifest's checksums (format 3): the file holds
// exactly the tensors the manifest lists, each with the recorded checksum of its bytes.
// Throws ManifestError naming the data file and the tensor, with the pointer
// /checksums/tensors/<name>; a file that cannot be read is a ManifestError at /safetensors.
// Manifests of formats 1 and 2 have no checksums: nothing is checked.
void verify_golden_data(const GoldenManifest& m);

}  // namespace kvbench
