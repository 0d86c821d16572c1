// libFuzzer target over the safetensors reader of `kvbench check`: bytes -> header length,
// header JSON, every entry checked against the data -> each tensor's bytes. A FileError is
// the expected answer to a bad file; anything else thrown, and any sanitizer report, is a
// finding.
#include <cstddef>
#include <cstdint>
#include <span>

#include "golden/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)kvbench::parse_safetensors(std::span(data, size), "fuzz.safetensors");
  } catch (const kvbench::FileError&) {}
  return 0;
}
