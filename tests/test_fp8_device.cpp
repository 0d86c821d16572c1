// shaders/float_format.glsl's FP8 conversions on the device, against core/float_format.hpp
// (itself checked against OFP8's formula in tests/test_fp8_format.cpp): every one of the 256
// codes of each format decoded, and encoding at every code value, every midpoint between
// neighbours and the f32 values next to both, past the largest value and for 100 000 random
// f32 patterns, with and without saturation.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/dtype.hpp"
#include "core/float_format.hpp"
#include "vk/runtime.hpp"

using namespace kvbench;

namespace {

std::vector<uint32_t> run_selftest(Runtime& rt, DType dt, uint32_t op, const std::vector<float>& in,
                                   uint32_t count) {
  auto inputs = in.empty() ? nullptr : rt.buffer_with(in);
  auto out = rt.buffer(size_t{count} * 4);
  rt.dispatch("float_format_selftest", {{"floats", out.get()}, {"inputs", inputs.get()}},
              {{"count", count}, {"dt", static_cast<uint32_t>(dt)}, {"op", op}}, (count + 63) / 64);
  std::vector<uint32_t> got(count);
  out->download(std::span(reinterpret_cast<uint8_t*>(got.data()), got.size() * 4));
  return got;
}

}  // namespace

TEST_CASE("float_format.glsl: every FP8 code decodes exactly (E4M3FN, E5M2)") {
  Runtime rt;
  for (DType dt : {DType::f8e4m3fn, DType::f8e5m2}) {
    const std::vector<uint32_t> got = run_selftest(rt, dt, 3, {}, 256);
    size_t wrong = 0;
    for (uint32_t c = 0; c < 256; ++c) {
      const double want = fp8_value(*dtype_fp8(dt), c);
      float f;
      std::memcpy(&f, &got[c], 4);
      const bool same = std::isnan(want)
                            ? std::isnan(f)
                            : static_cast<double>(f) == want && std::signbit(f) == std::signbit(want);
      if (!same && wrong++ < 5)
        FAIL_CHECK(dtype_name(dt) << " code " << c << ": got " << f << ", want " << want);
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("float_format.glsl: FP8 encoding rounds like fp8_code, with and without saturation") {
  Runtime rt;
  for (DType dt : {DType::f8e4m3fn, DType::f8e5m2}) {
    const Fp8 f = *dtype_fp8(dt);
    std::vector<float> in;
    const auto near = [&](float x) {
      for (float v : {x, std::nextafter(x, INFINITY), std::nextafter(x, -INFINITY)}) {
        in.push_back(v);
        in.push_back(-v);
      }
    };
    for (unsigned c = 0; c < 0x7F; ++c) {
      const double a = fp8_value(f, c), b = fp8_value(f, c + 1);
      if (std::isnan(a) || std::isinf(a)) continue;
      near(static_cast<float>(a));
      if (!std::isnan(b) && !std::isinf(b)) near(static_cast<float>((a + b) / 2));  // exact in f32
    }
    for (float x : {464.0f, 480.0f, 61440.0f, 1e30f, INFINITY, NAN, 1e-30f, 0.0f}) near(x);
    uint64_t state = 0x243f6a8885a308d3u;
    while (in.size() % 64 != 0 || in.size() < 100000) {
      state = state * 6364136223846793005u + 1442695040888963407u;
      const auto bits = static_cast<uint32_t>(state >> 32);
      float x;
      std::memcpy(&x, &bits, 4);
      in.push_back(x);  // inf and NaN included
    }
    const auto n = static_cast<uint32_t>(in.size());
    for (const bool saturate : {false, true}) {
      const std::vector<uint32_t> got = run_selftest(rt, dt, saturate ? 5 : 4, in, n);
      const Fp8Overflow overflow = saturate ? Fp8Overflow::saturate : Fp8Overflow::overflow_to_special;
      size_t wrong = 0;
      for (size_t i = 0; i < in.size(); ++i) {
        unsigned want = fp8_code(f, in[i], overflow);
        // NaN: any NaN code of the sign (E5M2 has three).
        const bool nan = std::isnan(fp8_value(f, want)) && std::isnan(fp8_value(f, got[i]));
        if (got[i] != want && !nan && wrong++ < 5)
          FAIL_CHECK(dtype_name(dt) << (saturate ? " saturating" : "") << ": " << in[i] << " -> " << got[i]
                                    << ", want " << want);
      }
      CHECK(wrong == 0);
    }
  }
}
