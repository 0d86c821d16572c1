// shaders/code_formats.glsl and hif8.glsl on the Vulkan device (lavapipe in CI), against the
// host's decoders and encoders (themselves checked against the definitions in
// tests/test_hifloat8.cpp and tests/test_small_floats.cpp): every code of HiF8, E8M0, E2M1,
// E2M3 and E3M2 decoded bit for bit (any NaN matches a NaN), and the saturating encoders on
// every midpoint between neighbouring values, its f32 neighbours and the values themselves.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <set>
#include <vector>

#include "core/dtype.hpp"
#include "core/float_format.hpp"
#include "core/hifloat8.hpp"
#include "vk/runtime.hpp"

using namespace kvbench;

namespace {

// out[i] for inputs `in` (decode: in is unused, count codes).
std::vector<uint32_t> run_selftest(Runtime& rt, DType dt, bool decode, const std::vector<uint32_t>& in,
                                   uint32_t count) {
  auto input = rt.buffer(std::max<size_t>(in.size(), 1) * 4);
  if (!in.empty()) input->upload(std::span(reinterpret_cast<const uint8_t*>(in.data()), in.size() * 4));
  auto out = rt.buffer(size_t{count} * 4);
  rt.dispatch("code_formats_selftest", {{"inputs", input.get()}, {"outputs", out.get()}},
              {{"count", count}, {"dtype", static_cast<uint32_t>(dt)}, {"decode", decode ? 1u : 0u}},
              (count + 63) / 64);
  std::vector<uint32_t> got(count);
  out->download(std::span(reinterpret_cast<uint8_t*>(got.data()), got.size() * 4));
  return got;
}

double host_value(DType dt, unsigned code) {
  switch (dt) {
    case DType::hifloat8: return hif8_decode(static_cast<uint8_t>(code));
    case DType::f8e8m0: return e8m0_value(code);
    case DType::f4e2m1: return small_float_value(SmallFloat::e2m1, code);
    case DType::f6e2m3: return small_float_value(SmallFloat::e2m3, code);
    default: return small_float_value(SmallFloat::e3m2, code);
  }
}

unsigned host_code(DType dt, double x) {
  switch (dt) {
    case DType::hifloat8: return hif8_encode(x, Hif8Overflow::saturate);
    case DType::f4e2m1: return small_float_code(SmallFloat::e2m1, x);
    case DType::f6e2m3: return small_float_code(SmallFloat::e2m3, x);
    default: return small_float_code(SmallFloat::e3m2, x);
  }
}

}  // namespace

TEST_CASE("code_formats.glsl: every code decodes on the device bit for bit as on the host") {
  Runtime rt;
  for (const DType dt : {DType::hifloat8, DType::f8e8m0, DType::f4e2m1, DType::f6e2m3, DType::f6e3m2}) {
    CAPTURE(dtype_name(dt));
    // Every code of the format, and for the small floats the bytes past it (no code: NaN).
    const uint32_t count = dt == DType::f4e2m1 ? 32 : 256;
    const std::vector<uint32_t> got = run_selftest(rt, dt, true, {}, count);
    size_t wrong = 0;
    for (uint32_t c = 0; c < count; ++c) {
      const double want = host_value(dt, c);
      const float f = std::bit_cast<float>(got[c]);
      // Exact in f32 (2^-127 too: an f32 subnormal), so the host's value as f32 has the bits.
      const bool same =
          std::isnan(want) ? std::isnan(f) : got[c] == std::bit_cast<uint32_t>(static_cast<float>(want));
      if (!same && wrong++ < 8) FAIL_CHECK("code " << c << ": device " << f << ", host " << want);
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("code_formats.glsl: the saturating encoders agree with the host on every midpoint") {
  Runtime rt;
  for (const DType dt : {DType::hifloat8, DType::f4e2m1, DType::f6e2m3, DType::f6e3m2}) {
    CAPTURE(dtype_name(dt));
    std::set<double> mags;
    for (unsigned c = 0; c < 256; ++c) {
      const double v = host_value(dt, c);
      if (std::isfinite(v)) mags.insert(std::fabs(v));
    }
    std::vector<float> xs;
    const auto add = [&](double v) {
      const auto f = static_cast<float>(v);
      for (const float x : {f, std::nextafter(f, 0.0f), std::nextafter(f, INFINITY)})
        for (const float s : {x, -x}) xs.push_back(s);
    };
    double previous = -1;
    for (const double m : mags) {
      add(m);
      if (previous >= 0) add((previous + m) / 2);  // exact: both are a few bits
      previous = m;
    }
    for (const double v : {previous * 1.25, previous * 2, previous * 1e6, 0x1p-23, 0x1p-24, 1e-30}) add(v);
    xs.push_back(INFINITY);
    xs.push_back(-INFINITY);
    std::vector<uint32_t> in;
    for (const float x : xs) in.push_back(std::bit_cast<uint32_t>(x));
    const std::vector<uint32_t> got = run_selftest(rt, dt, false, in, static_cast<uint32_t>(in.size()));
    size_t wrong = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const unsigned want = host_code(dt, xs[i]);
      if (got[i] != want && wrong++ < 8) FAIL_CHECK(xs[i] << ": device " << got[i] << ", host " << want);
    }
    CHECK(wrong == 0);
  }
}
