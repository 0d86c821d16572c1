// pmx.KeyValueCache: store current K/V at start_pos in the (optionally group-quantized)
// cache of layer layer_idx, then return the dequantized K/V of positions
// [0, start_pos + seqlen), each kv head repeated num_repeat times.
// Formulas, layouts and decisions: specs/key_value_cache.md.
#include "ops/key_value_cache/key_value_cache.hpp"

#include <algorithm>
#include <cmath>

#include "check/expected.hpp"
#include "core/rng.hpp"
#include "ops/vulkan_io.hpp"
#include "ref/ppl_cache_store.hpp"
#include "ref/quant.hpp"
#include "vk/runtime.hpp"

namespace kvbench {
namespace {

// Mirrors shaders/kv_cache_push.glsl.
struct KvCachePush {
  uint32_t batch, seqlen, heads, head_dim;
  uint32_t quant_group, quant_bit, num_layer, layer_idx;
  uint32_t max_batch, max_seqlen, start_pos, layout;
  uint32_t num_repeat, input_dtype, scale_dtype, cache_dtype;
};

struct Params {
  int64_t num_layer, layer_idx, quant_bit, quant_group, num_repeat, cache_layout;
  int64_t batch, seqlen, num_heads, head_dim, max_batch, max_seqlen, start_pos;
  DType input, scale, cache;
  std::pair<double, double> key_range, value_range;
};

class KeyValueCacheCase final : public OpCase {
 public:
  KeyValueCacheCase(const CaseDef& c, Params p) : def_(c), p_(p) {}

  std::string describe() const override {
    return "B=" + std::to_string(p_.batch) + " S=" + std::to_string(p_.seqlen) + " H=" + std::to_string(p_.num_heads) +
           " Dh=" + std::to_string(p_.head_dim) + " start_pos=" + std::to_string(p_.start_pos) +
           " MaxB=" + std::to_string(p_.max_batch) + " MaxS=" + std::to_string(p_.max_seqlen) +
           " L=" + std::to_string(p_.num_layer) + " l=" + std::to_string(p_.layer_idx) +
           " quant_bit=" + std::to_string(p_.quant_bit) + " quant_group=" + std::to_string(p_.quant_group) +
           " num_repeat=" + std::to_string(p_.num_repeat) + " cache_layout=" + std::to_string(p_.cache_layout) +
           " T1=" + std::string(dtype_name(p_.input)) + " scale=" + std::string(dtype_name(p_.scale));
  }

  int64_t groups() const { return p_.quant_bit ? p_.head_dim / p_.quant_group : 0; }

  Shape cache_shape(int64_t last) const {
    if (p_.cache_layout == 0) return {p_.max_batch, p_.num_layer, 2, p_.max_seqlen, p_.num_heads, last};
    return {p_.num_layer, p_.max_batch, 2, p_.num_heads, p_.max_seqlen, last};
  }

  // Flat offset of element 0 of row (b, kv, t, h); `last` is head_dim or the group count.
  size_t row(int64_t b, int64_t kv, int64_t t, int64_t h, int64_t last) const {
    const int64_t l = p_.layer_idx, L = p_.num_layer, H = p_.num_heads;
    if (p_.cache_layout == 0) return static_cast<size_t>(((((b * L + l) * 2 + kv) * p_.max_seqlen + t) * H + h) * last);
    return static_cast<size_t>(((((l * p_.max_batch + b) * 2 + kv) * H + h) * p_.max_seqlen + t) * last);
  }

  TensorSet make_tensors() const override {
    TensorSet ts;
    const Shape cur{p_.batch, p_.seqlen, p_.num_heads, p_.head_dim};
    auto fill_uniform = [&](Tensor& t, std::pair<double, double> r) {
      CounterRng rng(def_.seed, t.name());
      for (size_t i = 0; i < t.numel(); ++i) t.set(i, rng.uniform(i, r.first, r.second));
    };
    Tensor key("current_key", p_.input, cur, Role::input), value("current_value", p_.input, cur, Role::input);
    fill_uniform(key, p_.key_range);
    fill_uniform(value, p_.value_range);
    Tensor start("start_pos", DType::i64, {}, Role::input);
    start.set(0, static_cast<double>(p_.start_pos));

    // The cache starts full of valid random contents (codes in range, positive scales),
    // so the positions before start_pos that the operator reads back are meaningful.
    Tensor cache("cache", p_.cache, cache_shape(p_.head_dim), Role::inplace);
    CounterRng cache_rng(def_.seed, "cache");
    const int64_t qmax = p_.quant_bit == 8 ? 127 : 7;
    for (size_t i = 0; i < cache.numel(); ++i)
      cache.set(i, p_.quant_bit ? static_cast<double>(cache_rng.integer(i, -qmax, qmax)) : cache_rng.uniform(i, -1, 1));
    ts.tensors = {std::move(key), std::move(value), std::move(start), std::move(cache)};
    if (p_.quant_bit) {
      Tensor scale("scale", p_.scale, cache_shape(groups()), Role::inplace);
      CounterRng scale_rng(def_.seed, "scale");
      for (size_t i = 0; i < scale.numel(); ++i) scale.set(i, scale_rng.uniform(i, 1.0 / 1024, 1.0 / 64));
      ts.tensors.push_back(std::move(scale));
    }
    const Shape out{p_.batch, p_.start_pos + p_.seqlen, p_.num_heads * p_.num_repeat, p_.head_dim};
    ts.tensors.emplace_back("key", p_.input, out, Role::output);
    ts.tensors.emplace_back("value", p_.input, out, Role::output);
    return ts;
  }

  std::vector<Expected> reference(const TensorSet& in) const override {
    const Tensor& cache_in = in.at("cache");
    const bool quant = p_.quant_bit != 0;
    const int64_t G = p_.quant_group, D = p_.head_dim, ng = groups();

    // The cache and scale after the store: initial contents with the written rows replaced.
    Expected cache = expect_unchanged(cache_in, def_.tolerance("cache", {}));
    Expected scale;
    if (quant) scale = expect_unchanged(in.at("scale"), def_.tolerance("scale", {}));
    for (int64_t kv = 0; kv < 2; ++kv) {
      const Tensor& cur = in.at(kv == 0 ? "current_key" : "current_value");
      for (int64_t b = 0; b < p_.batch; ++b)
        for (int64_t s = 0; s < p_.seqlen; ++s)
          for (int64_t h = 0; h < p_.num_heads; ++h) {
            const int64_t t = p_.start_pos + s;
            std::vector<double> x(static_cast<size_t>(D));
            for (int64_t d = 0; d < D; ++d) x[d] = cur.get(cur.offset({b, s, h, d}));
            store_ppl_row(x, p_.quant_bit, G, p_.input, p_.scale, row(b, kv, t, h, D), quant ? row(b, kv, t, h, ng) : 0,
                          cache, scale);
          }
    }

    // key/value: positions [0, start_pos + seqlen) read back from the updated cache.
    std::vector<Expected> out;
    const int64_t total = p_.start_pos + p_.seqlen, R = p_.num_repeat, OH = p_.num_heads * R;
    for (int64_t kv = 0; kv < 2; ++kv) {
      Expected e{.tensor = kv == 0 ? "key" : "value"};
      e.tolerance = def_.tolerance(e.tensor, {});
      const size_t n = static_cast<size_t>(p_.batch * total * OH * D);
      e.value.resize(n);
      e.alternate.assign(n, Expected::none);
      size_t i = 0;
      for (int64_t b = 0; b < p_.batch; ++b)
        for (int64_t t = 0; t < total; ++t)
          for (int64_t o = 0; o < OH; ++o)
            for (int64_t d = 0; d < D; ++d, ++i) {
              const size_t c = row(b, kv, t, o / R, D) + d;
              if (!quant) {
                e.value[i] = round_to(p_.input, cache.value[c]);
                continue;
              }
              const double s = scale.value[row(b, kv, t, o / R, ng) + d / G];
              e.value[i] = dequant_ppl(cache.value[c], s, p_.scale, p_.input);
              if (!std::isnan(cache.alternate[c])) e.alternate[i] = dequant_ppl(cache.alternate[c], s, p_.scale, p_.input);
            }
      e.exact = e.value;
      out.push_back(std::move(e));
    }
    out.push_back(std::move(cache));
    if (quant) out.push_back(std::move(scale));
    return out;
  }

  double run_vulkan(Runtime& rt, TensorSet& io) const override {
    DeviceTensors dev(rt, io);
    const int64_t total = p_.start_pos + p_.seqlen;
    KvCachePush push{};
    push.batch = static_cast<uint32_t>(p_.batch);
    push.seqlen = static_cast<uint32_t>(p_.seqlen);
    push.heads = static_cast<uint32_t>(p_.num_heads);
    push.head_dim = static_cast<uint32_t>(p_.head_dim);
    push.quant_group = static_cast<uint32_t>(p_.quant_group);
    push.quant_bit = static_cast<uint32_t>(p_.quant_bit);
    push.num_layer = static_cast<uint32_t>(p_.num_layer);
    push.layer_idx = static_cast<uint32_t>(p_.layer_idx);
    push.max_batch = static_cast<uint32_t>(p_.max_batch);
    push.max_seqlen = static_cast<uint32_t>(p_.max_seqlen);
    push.start_pos = static_cast<uint32_t>(p_.start_pos);
    push.layout = static_cast<uint32_t>(p_.cache_layout);
    push.num_repeat = static_cast<uint32_t>(p_.num_repeat);
    push.input_dtype = static_cast<uint32_t>(p_.input);
    push.scale_dtype = static_cast<uint32_t>(p_.scale);
    push.cache_dtype = static_cast<uint32_t>(p_.cache);
    Buffer* scale = p_.quant_bit ? dev.at("scale") : dev.placeholder();
    const auto rows = static_cast<uint32_t>(p_.batch * p_.seqlen * p_.num_heads * 2);
    double ms = rt.dispatch("kv_cache_store", {dev.at("current_key"), dev.at("current_value"), dev.at("cache"), scale},
                            push, (rows + 63) / 64);
    const auto outputs = static_cast<uint64_t>(p_.batch * total * p_.num_heads * p_.num_repeat * p_.head_dim);
    ms += rt.dispatch("kv_cache_fetch", {dev.at("cache"), scale, dev.at("key"), dev.at("value")}, push,
                      static_cast<uint32_t>((outputs + 63) / 64), 2);
    dev.download(io);
    return ms;
  }

 private:
  CaseDef def_;
  Params p_;
};

class KeyValueCacheOperator final : public Operator {
 public:
  std::string id() const override { return "pmx.KeyValueCache"; }

  std::unique_ptr<OpCase> instantiate(const CaseDef& c) const override {
    Params p{};
    p.num_layer = c.integer("attributes", "num_layer");
    p.layer_idx = c.integer("attributes", "layer_idx");
    p.quant_bit = c.integer("attributes", "quant_bit");
    p.quant_group = c.integer("attributes", "quant_group", 8);
    p.num_repeat = c.integer("attributes", "num_repeat", 1);
    p.cache_layout = c.integer("attributes", "cache_layout", 0);
    p.batch = c.integer("shapes", "batch");
    p.seqlen = c.integer("shapes", "seqlen");
    p.num_heads = c.integer("shapes", "num_heads");
    p.head_dim = c.integer("shapes", "head_dim");
    p.max_batch = c.integer("shapes", "max_batch", p.batch);
    p.max_seqlen = c.integer("shapes", "max_seqlen");
    p.start_pos = c.integer("inputs", "start_pos");
    p.input = c.dtype("current_key", DType::f16, {DType::f16, DType::f32});
    if (c.has("dtypes", "current_value") && c.dtype("current_value", p.input, {DType::f16, DType::f32}) != p.input)
      c.fail("dtypes", "current_value", "current_value must have the dtype of current_key (T1)");
    p.scale = c.dtype("scale", DType::f16, {DType::f16, DType::f32});
    p.key_range = c.range("current_key", {-1, 1});
    p.value_range = c.range("current_value", {-1, 1});

    if (p.num_layer < 1) c.fail("attributes", "num_layer", "num_layer must be at least 1");
    if (p.layer_idx < 0 || p.layer_idx >= p.num_layer)
      c.fail("attributes", "layer_idx", "layer_idx must lie in [0, num_layer) = [0, " + std::to_string(p.num_layer) + ")");
    if (p.quant_bit != 0 && p.quant_bit != 8 && p.quant_bit != 4)
      c.fail("attributes", "quant_bit", "quant_bit must be 0, 8 or 4 (4 is kvbench's extension)");
    if (p.num_repeat < 1) c.fail("attributes", "num_repeat", "num_repeat must be at least 1");
    if (p.cache_layout != 0 && p.cache_layout != 1) c.fail("attributes", "cache_layout", "cache_layout must be 0 or 1");
    for (const char* dim : {"batch", "seqlen", "num_heads", "head_dim"})
      if (c.integer("shapes", dim) < 1) c.fail("shapes", dim, std::string(dim) + " must be at least 1");
    if (p.quant_bit && (p.quant_group < 1 || p.head_dim % p.quant_group != 0))
      c.fail("attributes", "quant_group", "quant_group must divide head_dim (" + std::to_string(p.head_dim) + ")");
    if (p.max_batch < p.batch) c.fail("shapes", "max_batch", "max_batch must be at least batch");
    if (p.start_pos < 0) c.fail("inputs", "start_pos", "start_pos must not be negative");
    if (p.start_pos + p.seqlen > p.max_seqlen)
      c.fail("inputs", "start_pos", "start_pos + seqlen (" + std::to_string(p.start_pos + p.seqlen) +
                                        ") exceeds max_seqlen (" + std::to_string(p.max_seqlen) + ")");
    p.cache = p.quant_bit == 8 ? DType::i8 : p.quant_bit == 4 ? DType::s4 : p.input;
    return std::make_unique<KeyValueCacheCase>(c, p);
  }
};

}  // namespace

std::unique_ptr<Operator> make_key_value_cache_operator() { return std::make_unique<KeyValueCacheOperator>(); }

}  // namespace kvbench
