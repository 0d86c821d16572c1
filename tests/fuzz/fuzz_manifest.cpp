// libFuzzer target over the golden manifest reader of `kvbench check` and the C++ library:
// bytes -> JSON with the manifest's depth limit -> every field checked (format, checksums,
// outputs, bound and nan_permitted names). A JsonTextError or ManifestError is the expected
// answer to a bad manifest; anything else thrown, and any sanitizer report, is a finding.
// The Python reader's seeded counterpart is tests/golden_readers_differential.py.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/json_text.hpp"
#include "golden/manifest.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const nlohmann::json doc = kvbench::parse_json_text(
        std::string_view(reinterpret_cast<const char*>(data), size), kvbench::kMaxManifestDepth);
    (void)kvbench::parse_manifest(doc, "fuzz.json");
  } catch (const kvbench::JsonTextError&) {
  } catch (const kvbench::ManifestError&) {}
  return 0;
}
