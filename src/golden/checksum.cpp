#include "golden/checksum.hpp"

#include <xxhash.h>

#include <cstdio>
#include <optional>
#include <stdexcept>

#include "cases/schema.hpp"
#include "golden/manifest.hpp"
#include "golden/safetensors.hpp"

namespace kvbench {

Checksum::Checksum() : state_(XXH3_createState()) {
  if (!state_ || XXH3_128bits_reset(static_cast<XXH3_state_t*>(state_)) != XXH_OK) throw std::bad_alloc();
}

Checksum::~Checksum() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

void Checksum::update(std::span<const uint8_t> bytes) {
  XXH3_128bits_update(static_cast<XXH3_state_t*>(state_), bytes.data(), bytes.size());
}

namespace {

std::string canonical_hex(XXH128_hash_t hash) {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, hash);
  char text[33];
  for (int i = 0; i < 16; ++i) std::snprintf(text + 2 * i, 3, "%02x", canonical.digest[i]);
  return text;
}

}  // namespace

std::string Checksum::hex() const {
  return canonical_hex(XXH3_128bits_digest(static_cast<XXH3_state_t*>(state_)));
}

std::string checksum_hex(std::span<const uint8_t> bytes) {
  return canonical_hex(XXH3_128bits(bytes.data(), bytes.size()));
}

bool is_checksum_text(const std::string& text) {
  if (text.size() != 32) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

void verify_golden_data(const GoldenManifest& m) {
  if (m.format < 3) return;
  std::optional<SafetensorsReader> file;
  try {
    file.emplace(m.safetensors);
  } catch (const FileError& e) {
    throw ManifestError("/safetensors", std::string("the golden data cannot be verified: ") + e.what());
  }
  const std::string where = m.safetensors + ": ";
  for (const auto& [name, sum] : m.checksums)
    if (!file->find(name))
      throw ManifestError(
          "/checksums/tensors/" + pointer_token(name),
          where + "tensor '" + name + "' listed in the manifest's checksums is missing from the file");
  for (const auto& [name, entry] : file->index().tensors) {
    const auto recorded = m.checksums.find(name);
    if (recorded == m.checksums.end())
      throw ManifestError("/checksums/tensors",
                          where + "tensor '" + name + "' has no checksum in the manifest");
    Checksum sum;
    file->read_chunks(entry, [&](std::span<const uint8_t> bytes) { sum.update(bytes); });
    if (sum.hex() != recorded->second)
      throw ManifestError("/checksums/tensors/" + pointer_token(name),
                          where + "tensor '" + name + "' does not match its checksum (" + kChecksumAlgorithm +
                              " " + sum.hex() + ", the manifest records " + recorded->second +
                              "): the golden data is corrupt; write it again with `kvbench golden`");
  }
}

}  // namespace kvbench
