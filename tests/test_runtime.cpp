// The Vulkan runtime's interface checks (buffers and parameters bound by the names the
// SPIR-V declares) and the shaders' element addressing past 2^32 bits.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "core/dtype.hpp"
#include "core/divide.hpp"
#include "core/error.hpp"
#include "core/float_format.hpp"
#include "f16_products.hpp"
#include "vk/buffer.hpp"
#include "vk/runtime.hpp"
#include "vk/spirv_reflect.hpp"

using namespace kvbench;

TEST_CASE("reflect_shader: bindings by their block's first member, Params members with offsets") {
  const ShaderInterface s = reflect_shader(embedded_shaders().at("attention_merge"));
  REQUIRE(s.buffers.size() == 7);
  CHECK(s.buffers.at(0) == std::vector<std::string>{"partials"});
  CHECK(s.buffers.at(24) == std::vector<std::string>{"out"});  // `out_`: GLSL reserves `out`
  CHECK(s.buffers.at(25) == std::vector<std::string>{"lse"});  // attention_finish.glsl's bindings
  CHECK(s.buffers.at(22) == std::vector<std::string>{"sinks"});
  REQUIRE(s.params_binding);
  CHECK(*s.params_binding == 31);
  REQUIRE(s.params.size() == 10);
  CHECK(s.params[3].name == "empty_zeros");
  CHECK(s.params[3].offset == 12);
  CHECK(s.params[3].type == ShaderInterface::Scalar::u32);
  // Aliased blocks share one binding; `NAME_texels` views bind tensor NAME.
  const ShaderInterface m = reflect_shader(embedded_shaders().at("mhca_attention"));
  auto cache_names = m.buffers.at(1);
  std::sort(cache_names.begin(), cache_names.end());
  CHECK(cache_names == std::vector<std::string>{"cache", "cache2"});
  CHECK(m.texel_buffers == std::map<uint32_t, std::string>{{8, "cache"}, {9, "scale"}, {10, "cachestarts"}});
  CHECK(s.texel_buffers == std::map<uint32_t, std::string>{{6, "partials"}});
}

TEST_CASE(
    "dispatch: a missing, unknown or out-of-range parameter or an unbound buffer is an error naming it") {
  Runtime rt;
  auto a = rt.buffer(64), b = rt.buffer(64);
  const KernelBuffers buffers{{"source", a.get()}, {"destination", b.get()}};
  CHECK_NOTHROW(rt.dispatch("copy_bandwidth", buffers, {{"count", 4}}, 1));
  auto message = [&](const KernelBuffers& bufs, const KernelParams& params) -> std::string {
    try {
      rt.dispatch("copy_bandwidth", bufs, params, 1);
    } catch (const std::logic_error& e) {
      return e.what();
    }
    return "";
  };
  CHECK(message(buffers, {}) == "copy_bandwidth: parameter count is not given");
  CHECK(message(buffers, {{"count", 4}, {"cuont", 4}}) ==
        "copy_bandwidth: the shader has no parameter cuont");
  CHECK(message(buffers, {{"count", -1}}).find("copy_bandwidth: parameter count = -1") == 0);
  CHECK(message(buffers, {{"count", 4294967296.0}}).find("does not fit its uint") != std::string::npos);
  CHECK(message({{"source", a.get()}}, {{"count", 4}}) ==
        "copy_bandwidth: no buffer given for binding 1 (destination)");
}

TEST_CASE("texels.glsl: texel_words reads every word of a tensor in groups of 1, 2 and 4, to its last word") {
  Runtime rt;
  REQUIRE(rt.texels_cover(148));
  // 37 distinct words (148 bytes: the buffer holds 10 whole texels, the last one padded).
  std::vector<uint32_t> words(37);
  for (uint32_t i = 0; i < words.size(); ++i) words[i] = 0x9e3779b9u * (i + 1);
  auto source = rt.buffer_with(words);
  CHECK(source->size() == 160);
  for (uint32_t n : {1u, 2u, 4u}) {
    CAPTURE(n);
    const uint32_t count = static_cast<uint32_t>(words.size()) / n * n;  // whole groups of n
    auto out = rt.buffer(count * 4);
    rt.dispatch("texels_selftest", {{"source", source.get()}, {"destination", out.get()}},
                {{"count", count}, {"n", n}}, 1);
    std::vector<uint32_t> got(count);
    out->download(std::span(reinterpret_cast<uint8_t*>(got.data()), got.size() * 4));
    CHECK(got == std::vector<uint32_t>(words.begin(), words.begin() + count));
  }
}

TEST_CASE("Runtime::buffer: a read past the tensor into the padding sees zeros, as past a binding's end") {
  // lavapipe bounds-checks loads and fetches: past the end of a binding or view they return
  // zero. The padding (allocation_size) moved that end, so it is zeroed: a kernel reading
  // a little past a tensor reads what it read before, whatever the memory held.
  Runtime rt;
  for (int i = 0; i < 64; ++i) rt.buffer_with(std::vector<uint32_t>(68 + i, 0xabababab));  // used memory
  const std::vector<uint32_t> words(37, 0x9e3779b9u);
  auto source = rt.buffer_with(words);
  REQUIRE(source->allocated() == 272);
  if (!rt.staging()) {
    const uint32_t count = 272 / 4;  // every word of the allocation, by texels of 4 words
    auto out = rt.buffer(count * 4);
    rt.dispatch("texels_selftest", {{"source", source.get()}, {"destination", out.get()}},
                {{"count", count}, {"n", 4u}}, (count + 63) / 64);  // workgroups of 64
    std::vector<uint32_t> got(count);
    out->download(std::span(reinterpret_cast<uint8_t*>(got.data()), got.size() * 4));
    CHECK(std::vector<uint32_t>(got.begin(), got.begin() + 37) == words);
    CHECK(std::vector<uint32_t>(got.begin() + 40, got.end()) == std::vector<uint32_t>(count - 40, 0));
  }
}

TEST_CASE("texels_cover: a tensor the view holds whole, never with KVBENCH_TEXELS=0") {
  Runtime rt;
  const uint64_t most = rt.info().max_texel_buffer_elements;
  REQUIRE(most > 0);  // Vulkan requires R32G32B32A32_UINT uniform texel buffers
  CHECK(rt.texels_cover(most * 16));
  CHECK_FALSE(rt.texels_cover(most * 16 + 1));
  CHECK_FALSE(Runtime(std::nullopt, RuntimeOptions{.texels = false}).texels_cover(16));
}

TEST_CASE("Runtime::buffer: the tensor's bytes rounded to 16, in an allocation of one class for every size") {
  // lavapipe compiles a pipeline's code anew for each class of its texel views' buffers: a
  // size that is a power of two, or whose bits 8-15 are all zero (src/vk/buffer.cpp).
  Runtime rt;
  std::vector<size_t> sizes{1, 15, 16, 17, 240, 255, 256, 257, 272, 496, 512, 65280, 65536, 65537, 1 << 20};
  for (size_t n = 1; n < 70000; n += 97) sizes.push_back(n);
  for (int k = 4; k <= 26; ++k)
    for (const long d : {-16L, 0L, 16L}) sizes.push_back(static_cast<size_t>((1L << k) + d));
  for (const size_t n : sizes) {
    CAPTURE(n);
    const auto b = rt.buffer(n);
    const size_t a = b->allocated();
    CHECK(b->size() == std::max<size_t>(16, (n + 15) / 16 * 16));
    CHECK(a >= b->size());
    CHECK(a - b->size() <= 256);
    CHECK((a & (a - 1)) != 0);
    CHECK(((a >> 8) & 0xff) != 0);
  }
  // At maxStorageBufferRange there is no room: the tensor's own size, which a storage
  // binding of the whole buffer may span.
  const size_t most = rt.info().max_storage_buffer_range / 16 * 16;
  CHECK(rt.buffer(most)->allocated() == most);
  // The rule itself, at every multiple of 16 up to 128 MiB (lavapipe's maxStorageBufferRange).
  size_t wrong = 0, worst = 0;
  for (size_t n = 16; n <= (size_t{1} << 27); n += 16) {
    const size_t a = allocation_size(n, size_t{1} << 28);
    worst = std::max(worst, a - n);
    wrong += a < n || (a & (a - 1)) == 0 || ((a >> 8) & 0xff) == 0;
  }
  CHECK(wrong == 0);
  CHECK(worst == 256);
  CHECK(allocation_size(65536, 65536) == 65536);
}

TEST_CASE("grid_layout: rows within the device's x limit that cover every group, refused past x * y") {
  using G = std::pair<uint32_t, uint32_t>;
  const std::array<uint32_t, 3> vulkan_minimum{65535, 65535, 65535};
  CHECK(grid_layout(1, vulkan_minimum) == G{1, 1});
  CHECK(grid_layout(65535, vulkan_minimum) == G{65535, 1});
  CHECK(grid_layout(65536, vulkan_minimum) == G{65535, 2});
  CHECK(grid_layout(200000, vulkan_minimum) == G{65535, 4});  // 262140 >= 200000 > 196605
  CHECK(grid_layout(0, vulkan_minimum).first == 0);
  // 2^32 invocations of 64 (the most a 32-bit index reaches) fit the minimum grid.
  const auto [x, y] = grid_layout((uint64_t{1} << 32) / 64, vulkan_minimum);
  CHECK(uint64_t{x} * y * 64 >= (uint64_t{1} << 32));
  CHECK(grid_layout(uint64_t{1} << 26, {uint32_t{0x7fffffff}, 65535, 65535}) ==
        G{1u << 26, 1});  // NVIDIA: one row
  CHECK(grid_layout(50, {7, 8, 1}) == G{7, 8});
  CHECK_THROWS_AS(grid_layout(57, {7, 8, 1}), std::logic_error);
}

TEST_CASE("grid.glsl: a 2-D grid past 65535 workgroups runs every invocation once") {
  Runtime rt;
  const uint32_t count = 65536 * 64 + 100;  // 65538 workgroups of 64: two rows, the second mostly surplus
  auto hits = rt.buffer(size_t{count} * 4);
  hits->upload(std::vector<uint8_t>(size_t{count} * 4, 0));
  REQUIRE(rt.info().max_workgroup_count[0] == 65535);  // lavapipe: the two rows are what is tested
  Batch batch(rt);
  batch.dispatch_invocations("grid_selftest", {{"hits", hits.get()}}, {{"count", count}}, count);
  batch.submit();
  std::vector<uint32_t> got(count);
  hits->download(std::span(reinterpret_cast<uint8_t*>(got.data()), got.size() * 4));
  size_t wrong = 0;
  for (uint32_t h : got) wrong += h != 1;
  CHECK(wrong == 0);
  CHECK_THROWS_AS(batch.dispatch_invocations("grid_selftest", {{"hits", hits.get()}}, {{"count", count}},
                                             (uint64_t{1} << 32) + 1),
                  std::logic_error);
}

TEST_CASE("storage.glsl: element addressing stays exact where the bit offset passes 2^32") {
  Runtime rt;
  // Indices of 4/8/16-bit elements whose bit offsets i * n overflow 32 bits (the last one
  // is the largest index a 32-bit element index can hold).
  const std::vector<uint32_t> indices{5, (1u << 29) + 7, (1u << 30) + 3, 0x9abcdef1u, 0xffffffffu};
  auto in = rt.buffer_with(indices);
  auto out = rt.buffer(indices.size() * 6 * 4);
  auto unused = rt.buffer(4);
  rt.dispatch(
      "storage_selftest",
      {{"indices", in.get()}, {"words", out.get()}, {"source", unused.get()}, {"loaded", unused.get()}},
      {{"count", indices.size()}, {"loads", 0}, {"width", 32}}, 1);
  std::vector<uint32_t> got(indices.size() * 6);
  out->download(std::span(reinterpret_cast<uint8_t*>(got.data()), got.size() * 4));
  for (size_t k = 0; k < indices.size(); ++k)
    for (uint32_t b = 0; b < 3; ++b) {
      const uint64_t n = 4u << b, bit = uint64_t{indices[k]} * n;  // exact in 64 bits
      CAPTURE(indices[k]);
      CAPTURE(n);
      CHECK(got[6 * k + 2 * b] == bit / 32);
      CHECK(got[6 * k + 2 * b + 1] == bit % 32);
    }
}

TEST_CASE("storage.glsl: LOAD_BITS reads each element of a run-time width 4, 8, 16 or 32 whole and alone") {
  Runtime rt;
  // Two words whose every nibble differs, and a third with the top bit set (a mask built
  // as 1 << 32 or a sign-extending shift would show there).
  const std::vector<uint32_t> words{0x76543210u, 0xfedcba98u, 0x80000001u};
  auto source = rt.buffer_with(words);
  auto loaded = rt.buffer(24 * 4);
  auto unused = rt.buffer(4);
  const std::map<uint32_t, std::vector<uint32_t>> want{
      {4, {0x0, 0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7, 0x8, 0x9, 0xa, 0xb,
           0xc, 0xd, 0xe, 0xf, 0x1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x8}},
      {8, {0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, 0x01, 0x00, 0x00, 0x80}},
      {16, {0x3210, 0x7654, 0xba98, 0xfedc, 0x0001, 0x8000}},
      {32, {0x76543210u, 0xfedcba98u, 0x80000001u}}};
  for (const auto& entry : want) {  // not a structured binding: clang 14 cannot capture one in CAPTURE
    const uint32_t width = entry.first;
    const std::vector<uint32_t>& expected = entry.second;
    rt.dispatch("storage_selftest",
                {{"indices", unused.get()},
                 {"words", unused.get()},
                 {"source", source.get()},
                 {"loaded", loaded.get()}},
                {{"count", 0}, {"loads", expected.size()}, {"width", width}}, 1);
    std::vector<uint32_t> got(expected.size());
    loaded->download(std::span(reinterpret_cast<uint8_t*>(got.data()), got.size() * 4));
    CAPTURE(width);
    CHECK(got == expected);
  }
}

TEST_CASE("float_format.glsl: every f16 and bf16 pattern decodes exactly, subnormals included") {
  Runtime rt;
  auto out = rt.buffer(65536 * 4);
  for (DType dt : {DType::f16, DType::bf16}) {
    rt.dispatch("float_format_selftest", {{"floats", out.get()}, {"inputs", nullptr}},
                {{"count", 65536}, {"dt", static_cast<uint32_t>(dt)}, {"op", 0}}, 65536 / 64);
    std::vector<uint32_t> got(65536);
    out->download(std::span(reinterpret_cast<uint8_t*>(got.data()), got.size() * 4));
    size_t wrong = 0;
    for (uint32_t h = 0; h < 65536; ++h) {
      const double want = dt == DType::f16 ? f16_bits_to_double(static_cast<uint16_t>(h))
                                           : bf16_bits_to_double(static_cast<uint16_t>(h));
      float f;
      std::memcpy(&f, &got[h], 4);
      const bool same = std::isnan(want)
                            ? std::isnan(f)
                            : (static_cast<double>(f) == want && std::signbit(f) == std::signbit(want));
      if (!same && wrong++ < 5)
        FAIL_CHECK(dtype_name(dt) << " bits " << h << ": got " << f << ", want " << want);
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE(
    "float_format.glsl: round_f16_fast rounds like f16 at every f16 value, its neighbours and halfway "
    "points") {
  // Inputs: each finite f16 value, the f32 values next to it, the halfway point to the next
  // f16 value and that point's f32 neighbours (ties and near-ties, subnormals included), the
  // overflow threshold 65520 and around it, and 200 000 random finite f32 patterns.
  std::vector<float> in;
  const auto near = [&](float x) {
    in.push_back(x);
    in.push_back(std::nextafter(x, INFINITY));
    in.push_back(std::nextafter(x, -INFINITY));
  };
  for (uint32_t h = 0; h < 0x7c00; ++h)
    for (float sign : {1.0f, -1.0f}) {
      const double a = f16_bits_to_double(static_cast<uint16_t>(h)),
                   b = f16_bits_to_double(static_cast<uint16_t>(h + 1));
      near(sign * static_cast<float>(a));
      near(sign * static_cast<float>((a + b) / 2));  // exact in f32: f16 has 11 significant bits
    }
  for (float x : {65504.0f, 65519.0f, 65520.0f, 65536.0f, 1e30f, 5.9604645e-08f / 2, 1e-30f}) {
    near(x);
    near(-x);
  }
  uint64_t state = 0x9e3779b97f4a7c15u;
  while (in.size() % 64 != 0 || in.size() < 400000) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    const auto bits = static_cast<uint32_t>(state >> 32);
    if ((bits & 0x7f800000u) == 0x7f800000u) continue;  // no inf or NaN
    float x;
    std::memcpy(&x, &bits, 4);
    in.push_back(x);
  }
  Runtime rt;
  auto inputs = rt.buffer_with(in);
  auto out = rt.buffer(in.size() * 4);
  const auto n = static_cast<uint32_t>(in.size());
  rt.dispatch("float_format_selftest", {{"floats", out.get()}, {"inputs", inputs.get()}},
              {{"count", n}, {"dt", static_cast<uint32_t>(DType::f16)}, {"op", 1}}, n / 64);
  std::vector<float> got(in.size());
  out->download(std::span(reinterpret_cast<uint8_t*>(got.data()), got.size() * 4));
  size_t wrong = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const double want = round_f16(in[i]);
    if (!(static_cast<double>(got[i]) == want && std::signbit(got[i]) == std::signbit(want)) && wrong++ < 5)
      FAIL_CHECK("round_f16_fast(" << in[i] << ") = " << got[i] << ", want " << want);
  }
  CHECK(wrong == 0);
}

TEST_CASE("float_format.glsl: round_f16_product rounds q * s like f16 for every int8 q and finite f16 s") {
  // 65536 x 256 products: every tie and near-tie an int8 or int4 code times an f16 scale
  // can make, signed zeros, and the overflow past 65504 (65520 and up becomes inf).
  Runtime rt;
  auto out = rt.buffer(size_t{65536} * 256 * 4);
  rt.dispatch("float_format_selftest", {{"floats", out.get()}, {"inputs", nullptr}},
              {{"count", 65536}, {"dt", static_cast<uint32_t>(DType::f16)}, {"op", 2}}, 65536 / 64);
  std::vector<float> got(size_t{65536} * 256);
  out->download(std::span(reinterpret_cast<uint8_t*>(got.data()), got.size() * 4));
  const ProductCheck r = check_f16_products(
      got, [](uint32_t h) { return (h & 0x7c00) != 0x7c00; }, "round_f16_product");  // inf, NaN: skipped
  CHECK(r.checked == size_t{63488} * 256);  // 2 * 1024 of the patterns are inf or NaN
  CHECK(r.wrong == 0);
}

TEST_CASE("timestamp_ticks: the difference modulo 2^timestampValidBits, across a wrap") {
  CHECK(timestamp_ticks(100, 350, 64) == 250);
  CHECK(timestamp_ticks(100, 350, 36) == 250);
  // A 36-bit counter that wrapped between the two stamps.
  const uint64_t top = (uint64_t{1} << 36) - 10;
  CHECK(timestamp_ticks(top, 5, 36) == 15);
  // Bits above the valid ones do not count.
  CHECK(timestamp_ticks(uint64_t{0xabc} << 40 | 7, uint64_t{0x123} << 40 | 9, 40) == 2);
}

TEST_CASE("default_device_index: the first GPU, else the first device, never RADV's null device") {
  auto dev = [](int index, bool gpu, bool null) {
    DeviceInfo d;
    d.index = index;
    d.is_gpu = gpu;
    d.null_device = null;
    return d;
  };
  CHECK(default_device_index({dev(0, false, false), dev(1, true, false)}) == 1);
  CHECK(default_device_index({dev(0, true, true), dev(1, false, false)}) ==
        1);  // RADV_FORCE_FAMILY=vega10 beside lavapipe
  CHECK(default_device_index({dev(0, true, true), dev(1, true, false)}) == 1);
  CHECK(default_device_index({dev(0, true, true)}) == -1);
  CHECK(default_device_index({}) == -1);
}

TEST_CASE(
    "check_descriptor_limits: a shader binding more storage buffers than a stage allows is a SKIP naming "
    "both") {
  ShaderInterface shader;
  for (uint32_t b = 0; b < 18; ++b) shader.buffers[b] = {"buffer" + std::to_string(b)};
  DeviceInfo dev;
  dev.name = "small device";
  dev.max_stage_storage_buffers = 18;
  CHECK_NOTHROW(check_descriptor_limits("fia_attention", shader, dev));
  dev.max_stage_storage_buffers = 8;
  CHECK_THROWS_WITH_AS(check_descriptor_limits("fia_attention", shader, dev),
                       "fia_attention binds 18 storage buffers; small device allows 8 per stage", SkipCase);
}

TEST_CASE(
    "plan_only names a dispatch's pipeline and compile_only dispatches no workgroup: neither computes") {
  Runtime rt;
  const std::vector<uint32_t> source(16, 7), zeros(16, 0);
  auto a = rt.buffer_with(source), b = rt.buffer_with(zeros);
  const KernelBuffers buffers{{"source", a.get()}, {"destination", b.get()}};
  auto destination = [&] {
    std::vector<uint32_t> v(16);
    b->download({reinterpret_cast<uint8_t*>(v.data()), v.size() * 4});
    return v;
  };
  rt.plan_only(true);
  rt.dispatch("copy_bandwidth", buffers, {{"count", 4}}, 1);
  rt.plan_only(false);
  CHECK(rt.take_pipeline_log() == std::vector<std::string>{"copy_bandwidth"});
  CHECK(destination() == zeros);
  rt.compile_only(true);
  rt.dispatch("copy_bandwidth", buffers, {{"count", 4}}, 1);
  rt.compile_only(false);
  CHECK(destination() == zeros);
  CHECK(rt.take_pipeline_log().empty());
  rt.dispatch("copy_bandwidth", buffers, {{"count", 4}}, 1);
  CHECK(destination() == source);
}

TEST_CASE("divide.glsl: divide_by_magic is t / d and t % d for every sampled t below 2^32 / d") {
  Runtime rt;
  auto out = rt.buffer(size_t{65536} * 8);
  std::vector<uint32_t> got(size_t{65536} * 2);
  size_t wrong = 0;
  // Power-of-two, odd and FIA-like block sizes; the dividends spread over [0, 2^32 / d) and
  // the last 65536 below the bound, where the multiply-high is furthest off.
  for (const uint32_t d : {1u, 2u, 3u, 7u, 16u, 48u, 128u, 144u, 512u, 1000u, 65535u}) {
    const uint64_t limit = (uint64_t{1} << 32) / d;
    CHECK(division_magic_covers(limit, d));
    CHECK(!division_magic_covers(limit + 1, d));
    for (const bool top : {false, true}) {
      const uint32_t first = top ? static_cast<uint32_t>(limit - 65536) : 0u;
      const uint32_t stride = top ? 1u : static_cast<uint32_t>(std::max<uint64_t>(1, limit / 65536));
      rt.dispatch(
          "divide_selftest", {{"words", out.get()}},
          {{"count", 65536}, {"first", first}, {"stride", stride}, {"d", d}, {"magic", division_magic(d)}},
          65536 / 64);
      out->download(std::span(reinterpret_cast<uint8_t*>(got.data()), got.size() * 4));
      for (uint32_t i = 0; i < 65536; ++i) {
        const uint32_t t = first + i * stride;
        if ((got[2 * i] != t / d || got[2 * i + 1] != t % d) && wrong++ < 5)
          FAIL_CHECK(t << " / " << d << ": " << got[2 * i] << " remainder " << got[2 * i + 1]);
      }
    }
  }
  CHECK(wrong == 0);
}

TEST_CASE(
    "every embedded shader declares SignedZeroInfNanPreserve and RoundingModeRTE for f32 "
    "(shaders/float_controls.glsl), the f16 module RoundingModeRTE for both widths") {
  // OpExecutionMode (opcode 16, four words): entry point, mode (4461 SignedZeroInfNanPreserve,
  // 4462 RoundingModeRTE), width.
  for (const auto& shader : embedded_shaders()) {
    const std::string& name = shader.first;  // (clang 14 cannot capture a structured binding)
    const auto& words = shader.second;
    std::set<std::pair<uint32_t, uint32_t>> modes;
    for (size_t i = 5; i < words.size();) {
      const uint32_t count = words[i] >> 16, opcode = words[i] & 0xffff;
      if (count == 0) break;
      if (opcode == 16 && count == 4) modes.insert({words[i + 2], words[i + 3]});
      i += count;
    }
    CHECK_MESSAGE(modes.count({4461, 32}), name << " does not include shaders/float_controls.glsl");
    CHECK_MESSAGE(modes.count({4462, 32}), name << " declares no RoundingModeRTE 32");
    if (name.ends_with("_f16"))
      CHECK_MESSAGE(modes.count({4462, 16}), name << " declares no RoundingModeRTE 16");
  }
}

TEST_CASE(
    "required subgroup sizes: the device's, full, are what the probe sees exactly when the runtime offers "
    "them") {
  Runtime rt;
  const DeviceInfo& dev = rt.info();
  if (dev.subgroup_size_control) {
    const uint32_t sg = dev.subgroup_size;
    CHECK(rt.probe_required_subgroups(sg, std::max<uint32_t>(4, 64 / sg)) == "");
    CHECK(dev.subgroup_size_broken.empty());
  } else if (!dev.subgroup_size_broken.empty()) {
    // The promise was broken (lavapipe at LP_NATIVE_VECTOR_WIDTH=1024): the decode kernel
    // refuses this device (tests/test_attention_kernel.cpp).
    MESSAGE("required subgroups not kept: " << dev.subgroup_size_broken);
  }
}
