// pmx.KeyValueCache from the outside: hand-derived tiny cases through the reference, and a
// store-then-fetch property on the Vulkan backend.
#include <doctest/doctest.h>

#include <cmath>

#include "case_helpers.hpp"
#include "cases/case_loader.hpp"
#include "core/float_format.hpp"
#include "ops/operator.hpp"
#include "vk/runtime.hpp"

using namespace kvbench;

namespace {

nlohmann::json tiny_case() {
  return nlohmann::json::parse(R"({
    "op": "pmx.KeyValueCache", "name": "tiny", "seed": 3,
    "attributes": {"num_layer": 2, "layer_idx": 1, "quant_bit": 8, "quant_group": 4, "num_repeat": 2, "cache_layout": 0},
    "shapes": {"batch": 1, "seqlen": 1, "num_heads": 1, "head_dim": 4, "max_batch": 1, "max_seqlen": 3},
    "inputs": {"start_pos": 1}
  })");
}

const Expected& expected(const std::vector<Expected>& all, const std::string& name) {
  for (const auto& e : all)
    if (e.tensor == name) return e;
  FAIL("no expected output " << name);
  throw;
}

}  // namespace

TEST_CASE("KeyValueCache int8, hand-derived: key {1, -0.5, 0.25, 0} in one group of 4") {
  for (int layout : {0, 1}) {
    CAPTURE(layout);
    nlohmann::json doc = tiny_case();
    doc["attributes"]["cache_layout"] = layout;
    auto op = instantiate(doc);
    TensorSet ts = op->make_tensors();
    const double key[4] = {1.0, -0.5, 0.25, 0.0};
    for (size_t d = 0; d < 4; ++d) {
      ts.at("current_key").set(d, key[d]);
      ts.at("current_value").set(d, 0.0);
    }
    const auto out = op->reference(ts);
    // s = fp16(1/127): 1/127 = 2^-7 * 1.00787..., 1.00787 * 1024 = 1032.13 -> 1032, so
    // s = 1032 * 2^-17 = 0.00787353515625.
    const double s = 1032.0 / 131072.0;
    // x/s in fp16: 1/s = 127.0087 -> 127 (ulp 1/16); -0.5/s = -63.504 -> -63.5 (ulp 1/32),
    // RNE -> -64; 0.25/s = 31.752 -> 31.75 (ulp 1/64), RNE -> 32; 0 -> 0.
    const double codes[4] = {127, -64, 32, 0};
    // Element offsets of (b=0, l=1, kv, t=1, h=0, d) in each layout.
    auto cache_at = [&](int kv, int d, int last) {
      // layout 0: (MaxB=1, L=2, 2, MaxS=3, H=1, last); layout 1: (L=2, MaxB=1, 2, H=1, MaxS=3, last)
      return layout == 0 ? (((1 * 2 + kv) * 3 + 1) * 1 + 0) * last + d
                         : (((1 * 1 + 0) * 2 + kv) * 1 * 3 + 1) * last + d;
    };
    const Expected& cache = expected(out, "cache");
    const Expected& scale = expected(out, "scale");
    for (int d = 0; d < 4; ++d) {
      CHECK(cache.value().get(cache_at(0, d, 4)) == codes[d]);
      CHECK(cache.is_touched(cache_at(0, d, 4)));
      CHECK(cache.value().get(cache_at(1, d, 4)) == 0);  // an all-zero value group
    }
    CHECK(scale.value().get(cache_at(0, 0, 1)) == s);
    CHECK(scale.value().get(cache_at(1, 0, 1)) == 1.0013580322265625e-05);  // fp16(1e-5): the floor
    // Exactly 2 rows of 4 codes and 2 scales are written; the rest must stay untouched.
    CHECK(cache.written().size() == 8);
    // key output (B=1, p+S=2, H*num_repeat=2, 4). Position 1 is the dequantized new row:
    // 127 s = 131064 * 2^-17 rounds in fp16 (11 bits) up to 1.0; -64 s = -0.50390625;
    // 32 s = 0.251953125; both heads repeat kv head 0.
    const Expected& k = expected(out, "key");
    const double deq[4] = {1.0, -0.50390625, 0.251953125, 0.0};
    for (int o = 0; o < 2; ++o)
      for (int d = 0; d < 4; ++d) CHECK(k.value().get((1 * 2 + o) * 4 + d) == deq[d]);
    // Position 0 comes from the cache's initial contents: fp16(q * s).
    const Tensor& c0 = ts.at("cache");
    const Tensor& s0 = ts.at("scale");
    const int row0 = layout == 0 ? ((1 * 2 + 0) * 3 + 0) : (((1 * 1 + 0) * 2 + 0) * 3 + 0);
    for (int o = 0; o < 2; ++o)
      for (int d = 0; d < 4; ++d)
        CHECK(k.value().get(o * 4 + d) == round_f16(c0.get(row0 * 4 + d) * s0.get(row0)));
  }
}

TEST_CASE("KeyValueCache quant_bit 0: the cache stores T1 values as they are") {
  nlohmann::json doc = tiny_case();
  doc["attributes"]["quant_bit"] = 0;
  auto op = instantiate(doc);
  TensorSet ts = op->make_tensors();
  CHECK_FALSE(ts.has("scale"));
  const auto out = op->reference(ts);
  const Expected& k = expected(out, "key");
  for (int o = 0; o < 2; ++o)
    for (int d = 0; d < 4; ++d) CHECK(k.value().get((1 * 2 + o) * 4 + d) == ts.at("current_key").get(d));
}

TEST_CASE("KeyValueCache on Vulkan: store then fetch returns the input within the quantization bound") {
  Runtime rt;
  for (int bits : {8, 4})
    for (int layout : {0, 1}) {
      CAPTURE(bits);
      CAPTURE(layout);
      auto doc = nlohmann::json::parse(R"({
        "op": "pmx.KeyValueCache", "name": "prop", "seed": 11,
        "attributes": {"num_layer": 3, "layer_idx": 2, "quant_bit": 8, "quant_group": 8, "num_repeat": 3, "cache_layout": 0},
        "shapes": {"batch": 2, "seqlen": 5, "num_heads": 3, "head_dim": 32, "max_batch": 3, "max_seqlen": 9},
        "inputs": {"start_pos": 4}, "ranges": {"current_key": [-3, 3]}
      })");
      doc["attributes"]["quant_bit"] = bits;
      doc["attributes"]["cache_layout"] = layout;
      auto op = instantiate(doc);
      TensorSet io = op->make_tensors();
      const TensorSet in = io;
      op->run_vulkan(rt, io);
      const Tensor& key = io.at("key");
      const Tensor& cur = in.at("current_key");
      const double qmax = bits == 8 ? 127 : 7;
      size_t checked = 0;
      for (int b = 0; b < 2; ++b)
        for (int s = 0; s < 5; ++s)
          for (int o = 0; o < 9; ++o) {
            const int h = o / 3;
            double m = 0;
            for (int g = 0; g < 8; ++g) m = std::max(m, std::fabs(cur.get(cur.offset({b, s, h, g}))));
            for (int d = 0; d < 32; ++d) {
              double gm = 0;  // max |x| of d's group
              for (int k = d / 8 * 8; k < d / 8 * 8 + 8; ++k)
                gm = std::max(gm, std::fabs(cur.get(cur.offset({b, s, h, k}))));
              const double step = gm / qmax;
              const double x = cur.get(cur.offset({b, s, h, d}));
              const double y = key.get(key.offset({b, 4 + s, o, d}));
              // Half a step, plus the fp16 rounding of the scale, of x/s and of the product.
              CHECK(std::fabs(y - x) <= step * (0.5 + 1.0 / 16) + 2 * f16_ulp(x) + 1e-5);
              ++checked;
            }
          }
      CHECK(checked == 2 * 5 * 9 * 32);
    }
}
