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

const Signature& kvc_signature() {
  static const Signature sig{
      .id = "pmx.KeyValueCache",
      .doc =
          "store current K/V at start_pos in the (optionally group-quantized) cache of layer layer_idx, "
          "return the dequantized K/V of positions [0, start_pos + seqlen) (specs/key_value_cache.md)",
      .params =
          {
              {.section = "attributes", .name = "num_layer", .min = 1, .doc = "layers in the cache"},
              {.section = "attributes",
               .name = "layer_idx",
               .min = 0,
               .doc = "the layer written and read, < num_layer"},
              {.section = "attributes",
               .name = "quant_bit",
               .allowed = {0, 8, 4},
               .doc = "0 (no quantization), 8, or 4 (kvbench's extension)"},
              {.section = "attributes",
               .name = "quant_group",
               .fallback = 8,
               .min = 1,
               .doc = "elements per scale; divides head_dim"},
              {.section = "attributes",
               .name = "num_repeat",
               .fallback = 1,
               .min = 1,
               .doc = "output heads per kv head (GQA)"},
              {.section = "attributes",
               .name = "cache_layout",
               .fallback = 0,
               .allowed = {0, 1},
               .doc = "0: (MaxB, L, 2, MaxS, H, Dh); 1: (L, MaxB, 2, H, MaxS, Dh)"},
              {.section = "shapes", .name = "batch", .min = 1, .doc = "B"},
              {.section = "shapes", .name = "seqlen", .min = 1, .doc = "S, tokens stored per batch"},
              {.section = "shapes", .name = "num_heads", .min = 1, .doc = "H, kv heads"},
              {.section = "shapes", .name = "head_dim", .min = 1, .doc = "Dh"},
              {.section = "shapes",
               .name = "max_batch",
               .derived = "batch",
               .min = 1,
               .doc = "MaxB, >= batch"},
              {.section = "shapes", .name = "max_seqlen", .min = 1, .doc = "MaxS, >= start_pos + seqlen"},
              {.section = "inputs", .name = "start_pos", .min = 0, .doc = "first position written"},
          },
      .tensors =
          {
              {.name = "current_key",
               .shape = "[B, S, H, Dh]",
               .choices = {DType::f16, DType::f32},
               .dtype_rule = "T1: f16 (default) or f32",
               .range = {{-1, 1}}},
              {.name = "current_value",
               .shape = "[B, S, H, Dh]",
               .choices = {DType::f16, DType::f32},
               .dtype_rule = "T1 (= current_key)",
               .range = {{-1, 1}}},
              {.name = "start_pos", .shape = "[]", .dtype_rule = "i64", .doc = "inputs.start_pos"},
              {.name = "cache",
               .role = Role::inplace,
               .shape = "layout 0: [MaxB, L, 2, MaxS, H, Dh]; 1: [L, MaxB, 2, H, MaxS, Dh]",
               .dtype_rule = "T1, i8 or s4 by quant_bit",
               .doc = "starts full of valid random contents"},
              {.name = "scale",
               .role = Role::inplace,
               .shape = "the cache's, last dim Dh / quant_group",
               .choices = {DType::f16, DType::f32},
               .dtype_rule = "f16 (default) or f32",
               .present = "quant_bit > 0"},
              {.name = "key",
               .role = Role::output,
               .shape = "[B, start_pos + S, H * num_repeat, Dh]",
               .dtype_rule = "T1"},
              {.name = "value",
               .role = Role::output,
               .shape = "[B, start_pos + S, H * num_repeat, Dh]",
               .dtype_rule = "T1"},
          },
      .from_files = {"current_key", "current_value", "cache", "scale"},
      .sizes = {"batch", "max_batch", "seqlen", "start_pos", "max_seqlen", "num_heads", "num_repeat",
                "head_dim", "num_layer"},
      .faults =
          {
              {"quant_truncate",
               "cache codes truncated toward zero (a C cast of x / s) instead of rounded to nearest even",
               ""},
              {"quant_scale_f32",
               "the scale max|x| / qmax computed and applied in f32 where T1 is f16 (codes from an f32 "
               "scale)",
               ""},
              {"int4_nibble_swap", "int4 codes stored with the two nibbles of each byte swapped", ""},
              {"repeat_head_mod", "output head o reads kv head o % H instead of o / num_repeat (GQA mapping)",
               ""},
              {"dequant_product_f32",
               "the dequantized q * s kept in f32, not rounded to the scale dtype before T1", ""},
              {"store_position_off_by_one",
               "current tokens stored at start_pos + s + 1 (past max_seqlen: dropped)", ""},
          },
  };
  return sig;
}

struct Params {
  int64_t num_layer, layer_idx, quant_bit, quant_group, num_repeat, cache_layout;
  int64_t batch, seqlen, num_heads, head_dim, max_batch, max_seqlen, start_pos;
  DType input, scale, cache;
};

class KeyValueCacheCase final : public OpCase {
 public:
  KeyValueCacheCase(Args a, Params p) : OpCase(std::move(a)), p_(p) {}

  std::string describe() const override {
    return "B=" + std::to_string(p_.batch) + " S=" + std::to_string(p_.seqlen) +
           " H=" + std::to_string(p_.num_heads) + " Dh=" + std::to_string(p_.head_dim) +
           " start_pos=" + std::to_string(p_.start_pos) + " MaxB=" + std::to_string(p_.max_batch) +
           " MaxS=" + std::to_string(p_.max_seqlen) + " L=" + std::to_string(p_.num_layer) +
           " l=" + std::to_string(p_.layer_idx) + " quant_bit=" + std::to_string(p_.quant_bit) +
           " quant_group=" + std::to_string(p_.quant_group) + " num_repeat=" + std::to_string(p_.num_repeat) +
           " cache_layout=" + std::to_string(p_.cache_layout) + " T1=" + std::string(dtype_name(p_.input)) +
           " scale=" + std::string(dtype_name(p_.scale));
  }

  int64_t groups() const { return p_.quant_bit ? p_.head_dim / p_.quant_group : 0; }

  Shape cache_shape(int64_t last) const {
    if (p_.cache_layout == 0) return {p_.max_batch, p_.num_layer, 2, p_.max_seqlen, p_.num_heads, last};
    return {p_.num_layer, p_.max_batch, 2, p_.num_heads, p_.max_seqlen, last};
  }

  // Flat offset of element 0 of row (b, kv, t, h); `last` is head_dim or the group count.
  size_t row(int64_t b, int64_t kv, int64_t t, int64_t h, int64_t last) const {
    const int64_t l = p_.layer_idx, L = p_.num_layer, H = p_.num_heads;
    if (p_.cache_layout == 0)
      return static_cast<size_t>(((((b * L + l) * 2 + kv) * p_.max_seqlen + t) * H + h) * last);
    return static_cast<size_t>(((((l * p_.max_batch + b) * 2 + kv) * H + h) * p_.max_seqlen + t) * last);
  }

  std::vector<TensorSpec> tensor_specs() const override {
    const Shape cur{p_.batch, p_.seqlen, p_.num_heads, p_.head_dim};
    const Shape out{p_.batch, p_.start_pos + p_.seqlen, p_.num_heads * p_.num_repeat, p_.head_dim};
    std::vector<TensorSpec> s{{"current_key", p_.input, cur},
                              {"current_value", p_.input, cur},
                              {"start_pos", DType::i64, {}},
                              {"cache", p_.cache, cache_shape(p_.head_dim)}};
    if (p_.quant_bit) s.push_back({"scale", p_.scale, cache_shape(groups())});
    s.push_back({"key", p_.input, out});
    s.push_back({"value", p_.input, out});
    return s;
  }

  // The rows of the current tokens, key and value: head_dim codes and their scales each.
  long double written_elements(const TensorSpec& spec) const override {
    const long double rows = 2.0L * p_.batch * p_.seqlen * p_.num_heads;
    return rows * static_cast<long double>(spec.name == "scale" ? groups() : p_.head_dim);
  }

  // The cache starts full of valid random contents (codes in range, positive scales),
  // so the positions before start_pos that the operator reads back are meaningful.
  void fill(Tensor& t) const override {
    const CounterRng rng(args().seed(), t.name());
    const int64_t qmax = p_.quant_bit == 8 ? 127 : 7;
    if (t.name() == "start_pos") {
      fill_values(t, {p_.start_pos});
    } else if (t.name() == "cache") {
      fill_with(t, [&](size_t i) {
        return p_.quant_bit ? static_cast<double>(rng.integer(i, -qmax, qmax)) : rng.uniform(i, -1, 1);
      });
    } else if (t.name() == "scale") {
      fill_uniform(t, {1.0 / 1024, 1.0 / 64});
    } else {
      OpCase::fill(t);
    }
  }

  std::vector<Expected> reference(const TensorSet& in) const override {
    const bool quant = p_.quant_bit != 0;
    const int64_t G = p_.quant_group, D = p_.head_dim, ng = groups();

    // The cache and scale after the store: initial contents with the written rows replaced.
    Expected cache = Expected::unchanged(in.at("cache"));
    Expected scale;
    if (quant) scale = Expected::unchanged(in.at("scale"));
    std::vector<PplRow> rows;
    for (int64_t kv = 0; kv < 2; ++kv) {
      const Tensor& cur = in.at(kv == 0 ? "current_key" : "current_value");
      for (int64_t b = 0; b < p_.batch; ++b)
        for (int64_t s = 0; s < p_.seqlen; ++s)
          for (int64_t h = 0; h < p_.num_heads; ++h) {
            const int64_t t = p_.start_pos + s + (fault_is("store_position_off_by_one") ? 1 : 0);
            if (t >= p_.max_seqlen) continue;
            rows.push_back(
                {&cur, cur.offset({b, s, h, 0}), row(b, kv, t, h, D), quant ? row(b, kv, t, h, ng) : 0});
          }
    }
    store_ppl_rows(
        rows, static_cast<size_t>(D), p_.quant_bit, G, p_.input, p_.scale, cache, scale, args().threads(),
        {.quant = {.truncate = fault_is("quant_truncate"), .scale_f32 = fault_is("quant_scale_f32")},
         .swap_nibbles = fault_is("int4_nibble_swap")});
    const auto kv_head = [&](int64_t o) {
      return fault_is("repeat_head_mod") ? o % p_.num_heads : o / p_.num_repeat;
    };
    const DType product = fault_is("dequant_product_f32") ? DType::f32 : p_.scale;
    cache.finish();
    scale.finish();

    // key/value: positions [0, start_pos + seqlen) read back from the updated cache, a row
    // of head_dim at a time.
    std::vector<Expected> out;
    const int64_t total = p_.start_pos + p_.seqlen, R = p_.num_repeat, OH = p_.num_heads * R;
    std::vector<double> codes(static_cast<size_t>(D)), scales(static_cast<size_t>(ng)), values(codes.size()),
        exact(codes.size());
    for (int64_t kv = 0; kv < 2; ++kv) {
      Expected e = Expected::output(in.at(kv == 0 ? "key" : "value"));
      size_t i = 0;
      for (int64_t b = 0; b < p_.batch; ++b)
        for (int64_t t = 0; t < total; ++t)
          for (int64_t o = 0; o < OH; ++o, i += codes.size()) {
            const size_t c = row(b, kv, t, kv_head(o), D);
            cache.value().get_range(c, codes.size(), codes.data());
            if (!quant) {
              e.set_row(i, codes.size(), codes.data(), codes.data());
              continue;
            }
            // T1(S(q * s)): exact holds S(q * s), before the final rounding to T1.
            scale.value().get_range(row(b, kv, t, kv_head(o), ng), scales.size(), scales.data());
            for (int64_t d = 0; d < D; ++d) {
              exact[d] = round_to(product, codes[d] * scales[d / G]);
              values[d] = round_to(p_.input, exact[d]);
            }
            e.set_row(i, codes.size(), values.data(), exact.data());
            for (const Alternate& a : cache.alternates_in(c, c + codes.size()))
              e.set_alternate(i + (a.index - c),
                              dequant_ppl(a.value, scales[(a.index - c) / G], p_.scale, p_.input));
          }
      out.push_back(std::move(e));
    }
    out.push_back(std::move(cache));
    if (quant) out.push_back(std::move(scale));
    return out;
  }

  double run_vulkan(Runtime& rt, TensorSet& io) const override {
    Batch batch(rt);
    DeviceTensors dev(batch, io, args().signature());
    const int64_t total = p_.start_pos + p_.seqlen;
    const KernelParams params{{"batch", p_.batch},
                              {"seqlen", p_.seqlen},
                              {"heads", p_.num_heads},
                              {"head_dim", p_.head_dim},
                              {"quant_group", p_.quant_group},
                              {"quant_bit", p_.quant_bit},
                              {"num_layer", p_.num_layer},
                              {"layer_idx", p_.layer_idx},
                              {"max_batch", p_.max_batch},
                              {"max_seqlen", p_.max_seqlen},
                              {"start_pos", p_.start_pos},
                              {"layout", p_.cache_layout},
                              {"num_repeat", p_.num_repeat},
                              {"input_dtype", static_cast<uint32_t>(p_.input)},
                              {"scale_dtype", static_cast<uint32_t>(p_.scale)},
                              {"cache_dtype", static_cast<uint32_t>(p_.cache)}};
    const auto rows = static_cast<uint32_t>(p_.batch * p_.seqlen * p_.num_heads * 2);
    batch.dispatch_invocations("kv_cache_store", dev.bindings(), params, rows);
    const auto outputs = static_cast<uint64_t>(p_.batch * total * p_.num_heads * p_.num_repeat * p_.head_dim);
    // An invocation per output word (two f16 or one f32), striding: as many groups as the
    // device allows (65535 on lavapipe).
    const uint64_t words = (outputs * dtype_bits(p_.input) + 31) / 32;
    const uint64_t fetch_groups = std::min<uint64_t>((words + 63) / 64, rt.info().max_workgroup_count[0]);
    batch.dispatch("kv_cache_fetch", dev.bindings(), params, static_cast<uint32_t>(fetch_groups), 2);
    dev.download(io);
    return batch.submit();
  }

 private:
  Params p_;
};

class KeyValueCacheOperator final : public Operator {
 public:
  const Signature& signature() const override { return kvc_signature(); }

  std::unique_ptr<OpCase> instantiate(Args a) const override {
    Params p{};
    p.num_layer = a.integer("num_layer");
    p.layer_idx = a.integer("layer_idx");
    p.quant_bit = a.integer("quant_bit");
    p.quant_group = a.integer("quant_group");
    p.num_repeat = a.integer("num_repeat");
    p.cache_layout = a.integer("cache_layout");
    p.batch = a.integer("batch");
    p.seqlen = a.integer("seqlen");
    p.num_heads = a.integer("num_heads");
    p.head_dim = a.integer("head_dim");
    if (!a.written("max_batch")) a.resolve("max_batch", p.batch);
    p.max_batch = a.integer("max_batch");
    p.max_seqlen = a.integer("max_seqlen");
    p.start_pos = a.integer("start_pos");
    p.input = a.dtype("current_key", DType::f16);
    a.require_same_dtype("current_value", p.input, "current_key");
    p.scale = a.dtype("scale", DType::f16);

    if (p.layer_idx >= p.num_layer)
      a.fail("layer_idx", "layer_idx must lie in [0, num_layer) = [0, " + std::to_string(p.num_layer) + ")");
    if (p.quant_bit && p.head_dim % p.quant_group != 0)
      a.fail("quant_group", "quant_group must divide head_dim (" + std::to_string(p.head_dim) + ")");
    if (p.max_batch < p.batch) a.fail("max_batch", "max_batch must be at least batch");
    if (p.start_pos + p.seqlen > p.max_seqlen)
      a.fail("start_pos", "start_pos + seqlen (" + std::to_string(p.start_pos + p.seqlen) +
                              ") exceeds max_seqlen (" + std::to_string(p.max_seqlen) + ")");
    p.cache = p.quant_bit == 8 ? DType::i8 : p.quant_bit == 4 ? DType::s4 : p.input;
    return std::make_unique<KeyValueCacheCase>(std::move(a), p);
  }
};

}  // namespace

std::unique_ptr<Operator> make_key_value_cache_operator() {
  return std::make_unique<KeyValueCacheOperator>();
}

}  // namespace kvbench
