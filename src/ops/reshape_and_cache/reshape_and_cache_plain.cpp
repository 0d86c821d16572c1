// atb.ReshapeAndCache: key/value[t, h, :] -> cache[slot // block_size, slot % block_size, h, :]
// for every token t with slot_mapping[t] >= 0 (a negative slot is a padding token).
#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "ops/reshape_and_cache/cache_copy.hpp"
#include "ops/reshape_and_cache/reshape_and_cache.hpp"
#include "ops/vulkan_io.hpp"
#include "vk/runtime.hpp"

namespace kvbench {
namespace {

struct PlainParams {
  int64_t num_tokens = 0, num_heads = 0, head_size = 0, num_blocks = 0, block_size = 0;
  std::vector<int64_t> slot_mapping;
  DType dtype = DType::f16;
};

const Signature& plain_signature() {
  static const Signature sig{
      .id = "atb.ReshapeAndCache",
      .doc =
          "key/value[t, h, :] -> cache[slot / block_size, slot % block_size, h, :] for every token with "
          "slot_mapping[t] >= 0 (specs/reshape_and_cache.md)",
      .params =
          {
              {.section = "shapes", .name = "num_tokens", .min = 1, .doc = "tokens"},
              {.section = "shapes", .name = "num_heads", .min = 1, .doc = "heads"},
              {.section = "shapes", .name = "head_size", .min = 1, .doc = "elements per head"},
              {.section = "shapes", .name = "num_blocks", .min = 1, .doc = "cache blocks"},
              {.section = "shapes", .name = "block_size", .min = 1, .doc = "slots per block"},
              {.section = "shapes",
               .name = "padding_tokens",
               .fallback = 0,
               .min = 0,
               .doc = "last tokens with slot -1 (generated slot_mapping)"},
              {.section = "inputs",
               .name = "slot_mapping",
               .type = ParamType::integers,
               .derived = "a seeded shuffle of all slots",
               .doc = "per token: its slot, negative = padding"},
          },
      .tensors =
          [] {
            auto t = cache_copy_tensors("[num_tokens, num_heads, head_size]",
                                        "[num_blocks, block_size, num_heads, head_size]");
            t.push_back({.name = "slot_mapping",
                         .shape = "[num_tokens]",
                         .dtype_rule = "i32",
                         .doc = "inputs.slot_mapping"});
            return t;
          }(),
      .from_files = {"key", "value", "key_cache", "value_cache"},
      .sizes = {"num_tokens", "padding_tokens", "num_heads", "head_size", "num_blocks", "block_size"},
      .faults =
          {
              {"padding_slot_wraps",
               "a padding token (slot -1) stored in the last slot, as a negative index wraps", ""},
              {"padding_slot_written_to_slot_0",
               "a padding token (slot -1) stored in slot 0 (the null block), where a real token's row may "
               "live",
               "vllm#38719 / #39444 (a dummy run wrote garbage into null block 0), transformers#46765 "
               "(padding "
               "tokens write NaN into slots real tokens read)"},
              {"head_major_cache",
               "the cache addressed as [num_blocks, num_heads, block_size, head_size] (the head-major "
               "layout of another backend)",
               ""},
              {"key_value_swapped",
               "key rows stored in value_cache and value rows in key_cache (arguments swapped)", ""},
              {"copy_through_f16", "rows copied through f16 registers (bf16 and f32 values rounded to f16)",
               ""},
          },
  };
  return sig;
}

PlainParams parse_plain(Args& c) {
  PlainParams p;
  p.num_tokens = c.integer("num_tokens");
  p.num_heads = c.integer("num_heads");
  p.head_size = c.integer("head_size");
  p.num_blocks = c.integer("num_blocks");
  p.block_size = c.integer("block_size");
  p.dtype = c.dtype("key", DType::f16);
  for (const char* t : {"value", "key_cache", "value_cache"}) c.require_same_dtype(t, p.dtype, "key");
  // The caches (and the slot shuffle below), before anything is allocated.
  c.require_memory("num_blocks", {p.num_blocks, p.block_size, p.num_heads, p.head_size},
                   inplace_host_bytes_each(p.dtype), "the key cache");
  // The key and value tensors and the slot mapping of num_tokens, before the mapping is made.
  c.require_memory({{{{"num_tokens", p.num_tokens}, {"num_heads", p.num_heads}, {"head_size", p.head_size}},
                     static_cast<uint64_t>(4 * dtype_bits(p.dtype) / 8)},
                    {{{"num_tokens", p.num_tokens}}, 8}},
                   "the key and value tensors and the slot mapping");
  const int64_t slots = p.num_blocks * p.block_size;
  if (c.written("slot_mapping")) {
    if (c.written("padding_tokens"))
      c.fail("padding_tokens", "padding_tokens only shapes a generated slot_mapping; this case gives one");
    p.slot_mapping = c.integers("slot_mapping");
    if (static_cast<int64_t>(p.slot_mapping.size()) != p.num_tokens)
      c.fail("slot_mapping", "slot_mapping needs num_tokens = " + std::to_string(p.num_tokens) + " entries");
  } else {
    // Distinct slots from a seeded shuffle of all slots; the last padding_tokens are -1.
    const int64_t padding = c.integer("padding_tokens");
    if (padding > p.num_tokens) c.fail("padding_tokens", "padding_tokens must lie in [0, num_tokens]");
    if (p.num_tokens - padding > slots) c.fail("num_blocks", "the cache has fewer slots than tokens");
    std::vector<int64_t> order(static_cast<size_t>(slots));
    std::iota(order.begin(), order.end(), 0);
    const CounterRng rng(c.seed(), "slot_mapping");
    for (int64_t i = slots - 1; i > 0; --i)
      std::swap(order[i], order[rng.integer(static_cast<uint64_t>(i), 0, i)]);
    for (int64_t t = 0; t < p.num_tokens; ++t)
      p.slot_mapping.push_back(t < p.num_tokens - padding ? order[t] : -1);
    c.resolve("slot_mapping", p.slot_mapping);
  }
  std::vector<int64_t> owner(static_cast<size_t>(slots), -1);
  for (int64_t t = 0; t < p.num_tokens; ++t) {
    const int64_t s = p.slot_mapping[t];
    if (s < 0) continue;
    if (s >= slots)
      c.fail_at("slot_mapping", t,
                "slot_mapping[" + std::to_string(t) + "] = " + std::to_string(s) +
                    " is outside [0, num_blocks * block_size) = [0, " + std::to_string(slots) + ")");
    if (owner[s] >= 0)
      c.fail_at("slot_mapping", t,
                "slot " + std::to_string(s) + " is used by tokens " + std::to_string(owner[s]) + " and " +
                    std::to_string(t));
    owner[s] = t;
  }
  return p;
}

class PlainCase final : public CacheCopyCase {
 public:
  PlainCase(Args a, PlainParams p) : CacheCopyCase(std::move(a), p.dtype, p.head_size), p_(std::move(p)) {}

  std::string describe() const override {
    return "tokens=" + std::to_string(p_.num_tokens) + " num_heads=" + std::to_string(p_.num_heads) +
           " head_size=" + std::to_string(p_.head_size) + " blocks=" + std::to_string(p_.num_blocks) + "x" +
           std::to_string(p_.block_size) + " " + std::string(dtype_name(p_.dtype));
  }

  std::vector<TensorSpec> tensor_specs() const override {
    const Shape input{p_.num_tokens, p_.num_heads, p_.head_size},
        cache{p_.num_blocks, p_.block_size, p_.num_heads, p_.head_size};
    return {{"key", p_.dtype, input},
            {"value", p_.dtype, input},
            {"key_cache", p_.dtype, cache},
            {"value_cache", p_.dtype, cache},
            {"slot_mapping", DType::i32, {p_.num_tokens}}};
  }

  void fill(Tensor& t) const override {
    if (t.name() == "slot_mapping")
      fill_values(t, p_.slot_mapping);
    else
      CacheCopyCase::fill(t);
  }

  void check_device(const DeviceInfo&) const override {
    if ((p_.head_size * dtype_bits(p_.dtype)) % 32 != 0)
      throw SkipCase("the copy kernel moves 32-bit words: head_size * dtype bits must be a multiple of 32");
  }

  std::vector<RowCopy> copies() const override {
    std::vector<RowCopy> rows;
    const int64_t H = p_.num_heads, bs = p_.block_size;
    for (int64_t t = 0; t < p_.num_tokens; ++t) {
      int64_t slot = p_.slot_mapping[t];
      if (slot < 0 && fault_is("padding_slot_wraps")) slot += p_.num_blocks * bs;
      if (slot < 0 && fault_is("padding_slot_written_to_slot_0")) slot = 0;
      if (slot < 0) continue;
      for (int64_t h = 0; h < H; ++h)
        rows.push_back(
            {t * H + h, fault_is("head_major_cache") ? (slot / bs * H + h) * bs + slot % bs : slot * H + h});
    }
    return rows;
  }

  double run_vulkan(Runtime& rt, TensorSet& io) const override {
    Batch batch(rt);
    DeviceTensors t(batch, io, args().signature());
    const KernelParams params{{"num_tokens", p_.num_tokens},
                              {"num_heads", p_.num_heads},
                              {"row_words", p_.head_size * dtype_bits(p_.dtype) / 32}};
    const auto n = static_cast<uint32_t>(p_.num_tokens * p_.num_heads);
    batch.dispatch_invocations("reshape_and_cache", t.bindings(), params, n);
    t.download(io);
    return batch.submit();
  }

  int64_t stored_rows() const override {
    int64_t stored = 0;
    for (int64_t s : p_.slot_mapping) stored += s >= 0 ? p_.num_heads : 0;
    return stored;
  }

  CaseFigures figures() const override {
    return memory_figures(stored_rows(), stored_rows());  // padding tokens are not data: nothing is saved
  }

 private:
  PlainParams p_;
};

class PlainOperator final : public Operator {
 public:
  const Signature& signature() const override { return plain_signature(); }
  std::unique_ptr<OpCase> instantiate(Args a) const override {
    PlainParams p = parse_plain(a);
    return std::make_unique<PlainCase>(std::move(a), std::move(p));
  }
};

}  // namespace

std::unique_ptr<Operator> make_reshape_and_cache_operator() { return std::make_unique<PlainOperator>(); }

}  // namespace kvbench
