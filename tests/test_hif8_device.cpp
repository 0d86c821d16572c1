// shaders/hif8.glsl's HiF8 decoding on the Vulkan device (lavapipe in CI), against
// core/hifloat8.hpp's hif8_decode (itself checked against the definition in
// tests/test_hifloat8.cpp): all 256 codes, bit for bit; any NaN matches a NaN.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <vector>

#include "core/hifloat8.hpp"
#include "vk/runtime.hpp"

using namespace kvbench;

TEST_CASE("hif8.glsl: every HiF8 code decodes on the device bit for bit as on the host") {
  Runtime rt;
  constexpr uint32_t kCodes = 256;
  auto out = rt.buffer(size_t{kCodes} * 4);
  rt.dispatch("hif8_selftest", {{"floats", out.get()}}, {{"count", kCodes}}, kCodes / 64);
  std::vector<uint32_t> got(kCodes);
  out->download(std::span(reinterpret_cast<uint8_t*>(got.data()), got.size() * 4));
  size_t wrong = 0;
  for (uint32_t c = 0; c < kCodes; ++c) {
    const double want = hif8_decode(static_cast<uint8_t>(c));
    const float f = std::bit_cast<float>(got[c]);
    // Exact in f32, so the host's value as f32 has the bits the device must produce.
    const bool same =
        std::isnan(want) ? std::isnan(f) : got[c] == std::bit_cast<uint32_t>(static_cast<float>(want));
    if (!same && wrong++ < 8) FAIL_CHECK("code " << c << ": device " << f << ", host " << want);
  }
  CHECK(wrong == 0);
}
