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

PlainParams parse(const CaseDef& c) {
  PlainParams p;
  p.num_tokens = c.integer("shapes", "num_tokens");
  p.num_heads = c.integer("shapes", "num_heads");
  p.head_size = c.integer("shapes", "head_size");
  p.num_blocks = c.integer("shapes", "num_blocks");
  p.block_size = c.integer("shapes", "block_size");
  p.dtype = c.dtype("key", DType::f16, {DType::f16, DType::bf16, DType::f32});
  for (const char* dim : {"num_tokens", "num_heads", "head_size", "num_blocks", "block_size"})
    if (c.integer("shapes", dim) < 1) c.fail("shapes", dim, std::string(dim) + " must be at least 1");
  const int64_t slots = p.num_blocks * p.block_size;
  if (c.has("inputs", "slot_mapping")) {
    p.slot_mapping = c.integers("inputs", "slot_mapping");
    if (static_cast<int64_t>(p.slot_mapping.size()) != p.num_tokens)
      c.fail("inputs", "slot_mapping", "slot_mapping needs num_tokens = " + std::to_string(p.num_tokens) + " entries");
  } else {
    // Distinct slots from a seeded shuffle of all slots; the last padding_tokens are -1.
    const int64_t padding = c.integer("shapes", "padding_tokens", 0);
    if (padding < 0 || padding > p.num_tokens) c.fail("shapes", "padding_tokens", "padding_tokens must lie in [0, num_tokens]");
    if (p.num_tokens - padding > slots) c.fail("shapes", "num_blocks", "the cache has fewer slots than tokens");
    std::vector<int64_t> order(static_cast<size_t>(slots));
    std::iota(order.begin(), order.end(), 0);
    const CounterRng rng(c.seed, "slot_mapping");
    for (int64_t i = slots - 1; i > 0; --i) std::swap(order[i], order[rng.integer(static_cast<uint64_t>(i), 0, i)]);
    for (int64_t t = 0; t < p.num_tokens; ++t) p.slot_mapping.push_back(t < p.num_tokens - padding ? order[t] : -1);
  }
  std::vector<int64_t> owner(static_cast<size_t>(slots), -1);
  for (int64_t t = 0; t < p.num_tokens; ++t) {
    const int64_t s = p.slot_mapping[t];
    if (s < 0) continue;
    if (s >= slots)
      c.fail_at("inputs", "slot_mapping", t, "slot_mapping[" + std::to_string(t) + "] = " + std::to_string(s) +
                                                 " is outside [0, num_blocks * block_size) = [0, " + std::to_string(slots) + ")");
    if (owner[s] >= 0)
      c.fail_at("inputs", "slot_mapping", t, "slot " + std::to_string(s) + " is used by tokens " +
                                                 std::to_string(owner[s]) + " and " + std::to_string(t));
    owner[s] = t;
  }
  return p;
}

struct PlainPush {
  uint32_t num_tokens, num_heads, row_words, pad_;
};

class PlainCase final : public OpCase {
 public:
  PlainCase(const CaseDef& c, PlainParams p) : def_(c), p_(std::move(p)) {}

  std::string describe() const override {
    return "tokens=" + std::to_string(p_.num_tokens) + " num_heads=" + std::to_string(p_.num_heads) +
           " head_size=" + std::to_string(p_.head_size) + " blocks=" + std::to_string(p_.num_blocks) + "x" +
           std::to_string(p_.block_size) + " " + std::string(dtype_name(p_.dtype));
  }

  TensorSet make_tensors() const override {
    TensorSet ts = make_cache_copy_tensors(def_, p_.dtype, {p_.num_tokens, p_.num_heads, p_.head_size},
                                           {p_.num_blocks, p_.block_size, p_.num_heads, p_.head_size});
    Tensor slots("slot_mapping", DType::i32, {p_.num_tokens}, Role::input);
    for (int64_t t = 0; t < p_.num_tokens; ++t) slots.set(static_cast<size_t>(t), static_cast<double>(p_.slot_mapping[t]));
    ts.tensors.push_back(std::move(slots));
    return ts;
  }

  std::vector<RowCopy> copies() const {
    std::vector<RowCopy> rows;
    for (int64_t t = 0; t < p_.num_tokens; ++t)
      if (p_.slot_mapping[t] >= 0)
        for (int64_t h = 0; h < p_.num_heads; ++h) rows.push_back({t * p_.num_heads + h, p_.slot_mapping[t] * p_.num_heads + h});
    return rows;
  }

  std::vector<Expected> reference(const TensorSet& in) const override {
    return cache_copy_reference(def_, in, copies(), p_.head_size);
  }

  double run_vulkan(Runtime& rt, TensorSet& io) const override {
    if ((p_.head_size * dtype_bits(p_.dtype)) % 32 != 0)
      throw SkipCase("the copy kernel moves 32-bit words: head_size * dtype bits must be a multiple of 32");
    DeviceTensors t(rt, io);
    const PlainPush push{static_cast<uint32_t>(p_.num_tokens), static_cast<uint32_t>(p_.num_heads),
                         static_cast<uint32_t>(p_.head_size * dtype_bits(p_.dtype) / 32), 0};
    const auto n = static_cast<uint32_t>(p_.num_tokens * p_.num_heads);
    const double ms = rt.dispatch("reshape_and_cache",
                                  {t.at("key"), t.at("value"), t.at("key_cache"), t.at("value_cache"), t.at("slot_mapping")},
                                  push, (n + 63) / 64);
    t.download(io);
    return ms;
  }

  CaseFigures figures() const override {
    int64_t stored = 0;
    for (int64_t s : p_.slot_mapping) stored += s >= 0 ? p_.num_heads : 0;
    return memory_figures(stored, stored, p_.head_size, p_.dtype);  // padding tokens are not data: nothing is saved
  }

  double traffic_bytes(const TensorSet&) const override {
    const double row = static_cast<double>(p_.head_size) * dtype_bits(p_.dtype) / 8;
    return 2 * row * static_cast<double>(p_.num_tokens * p_.num_heads + copies().size());
  }

 private:
  CaseDef def_;
  PlainParams p_;
};

class PlainOperator final : public Operator {
 public:
  std::string id() const override { return "atb.ReshapeAndCache"; }
  std::unique_ptr<OpCase> instantiate(const CaseDef& c) const override { return std::make_unique<PlainCase>(c, parse(c)); }
};

}  // namespace

std::unique_ptr<Operator> make_reshape_and_cache_operator() { return std::make_unique<PlainOperator>(); }

}  // namespace kvbench
