// atb.ReshapeAndCacheOmni: per (batch, head) run, copy the kept tokens (all, or the sink
// [0, off) and the recent [off + wins, seqLen)) to consecutive cache slots.
#include <algorithm>

#include "core/error.hpp"
#include "ops/reshape_and_cache/cache_copy.hpp"
#include "ops/reshape_and_cache/reshape_and_cache.hpp"
#include "ops/vulkan_io.hpp"
#include "vk/runtime.hpp"

namespace kvbench {
namespace {

struct OmniParams {
  int64_t num_head = 0, head_size = 0, num_blocks = 0, block_size = 0;
  std::vector<int64_t> seq_len, wins, offset_index, slot_mapping;
  DType dtype = DType::f16;

  int64_t batches() const { return static_cast<int64_t>(seq_len.size()); }
  int64_t runs() const { return batches() * num_head; }
  bool compressed(int64_t i) const { return offset_index[i] != -1 && wins[i] != 0; }
  int64_t kept(int64_t i) const { return seq_len[i / num_head] - (compressed(i) ? wins[i] : 0); }
  int64_t num_tokens() const {
    int64_t n = 0;
    for (int64_t s : seq_len) n += s;
    return n;
  }
};

const Signature& omni_signature() {
  static const Signature sig{
      .id = "atb.ReshapeAndCacheOmni",
      .doc =
          "per (batch, head) run, copy the kept tokens (all, or the sink [0, offsetIndex) and the recent "
          "[offsetIndex + wins, seqLen)) to consecutive cache slots (specs/reshape_and_cache.md)",
      .params =
          {
              {.section = "shapes", .name = "num_head", .min = 1, .doc = "heads; batch * num_head < 500"},
              {.section = "shapes", .name = "head_size", .min = 32, .doc = "a multiple of 32"},
              {.section = "shapes", .name = "num_blocks", .min = 1, .doc = "cache blocks"},
              {.section = "shapes", .name = "block_size", .min = 1, .doc = "slots per block"},
              {.section = "shapes",
               .name = "slot_start",
               .fallback = 0,
               .min = 0,
               .doc = "first slot when slot_mapping is not given"},
              {.section = "inputs", .name = "seqLen", .type = ParamType::integers, .doc = "tokens per batch"},
              {.section = "inputs",
               .name = "wins",
               .type = ParamType::integers,
               .doc = "per run: tokens dropped"},
              {.section = "inputs",
               .name = "offsetIndex",
               .type = ParamType::integers,
               .doc = "per run: first dropped token, -1 = not compressed"},
              {.section = "inputs",
               .name = "slot_mapping",
               .type = ParamType::integers,
               .derived = "runs packed from slot_start",
               .doc = "per run: first slot, negative = skipped"},
          },
      .tensors =
          [] {
            auto t =
                cache_copy_tensors("[tokens, num_head, head_size]", "[num_blocks, block_size, 1, head_size]");
            for (const char* name : {"slot_mapping", "wins", "seqLen", "offsetIndex"})
              t.push_back({.name = name,
                           .shape = "[runs] ([batch] for seqLen)",
                           .dtype_rule = "i32",
                           .doc = "inputs." + std::string(name)});
            return t;
          }(),
      .from_files = {"key", "value", "key_cache", "value_cache"},
      .sizes = {"seqLen", "num_head", "head_size", "num_blocks", "block_size"},
      .faults =
          {
              {"window_end_inclusive",
               "drops tokens [offsetIndex, offsetIndex + win] (one past the window) and keeps "
               "the rest after them",
               ""},
              {"window_ignored",
               "stores every token of a compressed run (the window not dropped; rows past the cache lost)",
               ""},
              {"key_value_swapped",
               "key rows stored in value_cache and value rows in key_cache (arguments swapped)", ""},
              {"slot_per_batch",
               "every head of a batch stored from the batch's first slot, slot_mapping[b * num_head], "
               "later heads overwriting earlier ones",
               ""},
              {"padding_slot_written_to_slot_0",
               "a skipped head (slot -1) stored from slot 0 (the null block), over rows real tokens may hold",
               "vllm#38719 / #39444 (a dummy run wrote garbage into null block 0), transformers#46765 "
               "(padding "
               "tokens write NaN into slots real tokens read)"},
          },
  };
  return sig;
}

OmniParams parse_omni(Args& c) {
  OmniParams p;
  p.num_head = c.integer("num_head");
  p.head_size = c.integer("head_size");
  p.num_blocks = c.integer("num_blocks");
  p.block_size = c.integer("block_size");
  p.dtype = c.dtype("key", DType::f16);
  for (const char* t : {"value", "key_cache", "value_cache"}) c.require_same_dtype(t, p.dtype, "key");
  p.seq_len = c.integers("seqLen");
  p.wins = c.integers("wins");
  p.offset_index = c.integers("offsetIndex");

  if (p.head_size % 32 != 0) c.fail("head_size", "head_size must be a multiple of 32");
  const int64_t B = p.batches(), runs = p.runs();
  if (B < 1) c.fail("seqLen", "seqLen needs at least one batch");
  if (runs >= 500)
    c.fail("num_head", "batch * num_head must be below 500, got " + std::to_string(B) + " * " +
                           std::to_string(p.num_head) + " = " + std::to_string(runs));
  for (const char* key : {"wins", "offsetIndex"}) {
    const auto& v = std::string(key) == "wins" ? p.wins : p.offset_index;
    if (static_cast<int64_t>(v.size()) != runs)
      c.fail(key, std::string(key) + " needs batch * num_head = " + std::to_string(runs) + " entries, got " +
                      std::to_string(v.size()));
  }
  for (int64_t b = 0; b < B; ++b)
    if (p.seq_len[b] <= 0) c.fail_at("seqLen", b, "seqLen[" + std::to_string(b) + "] must be positive");
  for (int64_t i = 0; i < runs; ++i) {
    const int64_t len = p.seq_len[i / p.num_head], off = p.offset_index[i], w = p.wins[i];
    const std::string at = "[" + std::to_string(i) + "]";
    if (off == -1) continue;  // not compressed: wins is ignored, as the document says
    if (w < 0 || w >= len)
      c.fail_at("wins", i,
                "wins" + at + " = " + std::to_string(w) + " must lie in [0, seqLen) = [0, " +
                    std::to_string(len) + ")");
    if (off < -1 || off > len - w)
      c.fail_at("offsetIndex", i,
                "offsetIndex" + at + " = " + std::to_string(off) +
                    " must lie in [-1, seqLen - wins] = [-1, " + std::to_string(len - w) + "]");
  }
  // slot_mapping: given, or runs packed from slot_start (ATB's test convention).
  if (c.written("slot_mapping")) {
    if (c.written("slot_start"))
      c.fail("slot_start", "slot_start only places a generated slot_mapping; this case gives one");
    p.slot_mapping = c.integers("slot_mapping");
    if (static_cast<int64_t>(p.slot_mapping.size()) != runs)
      c.fail("slot_mapping", "slot_mapping needs batch * num_head = " + std::to_string(runs) + " entries");
  } else {
    int64_t next = c.integer("slot_start");
    for (int64_t i = 0; i < runs; ++i) {
      p.slot_mapping.push_back(next);
      next += p.kept(i);
    }
    c.resolve("slot_mapping", p.slot_mapping);
  }
  const int64_t slots = p.num_blocks * p.block_size;
  std::vector<std::pair<int64_t, int64_t>> spans;  // (start, run) of the runs that write
  for (int64_t i = 0; i < runs; ++i) {
    const int64_t s = p.slot_mapping[i];
    if (s < 0) continue;  // skipped (specs/reshape_and_cache.md)
    if (s + p.kept(i) > slots)
      c.fail_at("slot_mapping", i,
                "run " + std::to_string(i) + " occupies slots [" + std::to_string(s) + ", " +
                    std::to_string(s + p.kept(i)) + "), outside [0, num_blocks * block_size) = [0, " +
                    std::to_string(slots) + ")");
    spans.emplace_back(s, i);
  }
  std::sort(spans.begin(), spans.end());
  for (size_t k = 1; k < spans.size(); ++k) {
    const auto [s0, i0] = spans[k - 1];
    const auto [s1, i1] = spans[k];
    if (s0 + p.kept(i0) > s1)
      c.fail_at("slot_mapping", static_cast<size_t>(i1),
                "run " + std::to_string(i1) + " (slots from " + std::to_string(s1) + ") overlaps run " +
                    std::to_string(i0) + " (slots [" + std::to_string(s0) + ", " +
                    std::to_string(s0 + p.kept(i0)) + "))");
  }
  return p;
}

class OmniCase final : public CacheCopyCase {
 public:
  OmniCase(Args a, OmniParams p) : CacheCopyCase(std::move(a), p.dtype, p.head_size), p_(std::move(p)) {}

  std::string describe() const override {
    int64_t compressed = 0;
    for (int64_t i = 0; i < p_.runs(); ++i) compressed += p_.compressed(i);
    return "batch=" + std::to_string(p_.batches()) + " num_head=" + std::to_string(p_.num_head) +
           " head_size=" + std::to_string(p_.head_size) + " tokens=" + std::to_string(p_.num_tokens()) +
           " blocks=" + std::to_string(p_.num_blocks) + "x" + std::to_string(p_.block_size) +
           " compressed_runs=" + std::to_string(compressed) + "/" + std::to_string(p_.runs()) + " " +
           std::string(dtype_name(p_.dtype));
  }

  std::vector<TensorSpec> tensor_specs() const override {
    const Shape input{p_.num_tokens(), p_.num_head, p_.head_size},
        cache{p_.num_blocks, p_.block_size, 1, p_.head_size};
    const Shape runs{p_.runs()};
    return {{"key", p_.dtype, input},
            {"value", p_.dtype, input},
            {"key_cache", p_.dtype, cache},
            {"value_cache", p_.dtype, cache},
            {"slot_mapping", DType::i32, runs},
            {"wins", DType::i32, runs},
            {"seqLen", DType::i32, {p_.batches()}},
            {"offsetIndex", DType::i32, runs}};
  }

  void fill(Tensor& t) const override {
    if (t.name() == "slot_mapping")
      fill_values(t, p_.slot_mapping);
    else if (t.name() == "wins")
      fill_values(t, p_.wins);
    else if (t.name() == "seqLen")
      fill_values(t, p_.seq_len);
    else if (t.name() == "offsetIndex")
      fill_values(t, p_.offset_index);
    else
      CacheCopyCase::fill(t);
  }

  std::vector<RowCopy> copies() const override {
    std::vector<RowCopy> rows;
    int64_t token0 = 0;
    for (int64_t b = 0; b < p_.batches(); ++b) {
      for (int64_t h = 0; h < p_.num_head; ++h) {
        const int64_t i = b * p_.num_head + h;
        int64_t slot = p_.slot_mapping[fault_is("slot_per_batch") ? b * p_.num_head : i];
        if (slot < 0 && fault_is("padding_slot_written_to_slot_0")) slot = 0;
        if (slot < 0) continue;
        const int64_t off = p_.offset_index[i], w = p_.wins[i] + (fault_is("window_end_inclusive") ? 1 : 0);
        const bool drop = p_.compressed(i) && !fault_is("window_ignored");
        int64_t k = 0;
        for (int64_t j = 0; j < p_.seq_len[b]; ++j) {
          if (drop && j >= off && j < off + w) continue;
          rows.push_back({(token0 + j) * p_.num_head + h, slot + k++});
        }
      }
      token0 += p_.seq_len[b];
    }
    return rows;
  }

  double run_vulkan(Runtime& rt, TensorSet& io) const override {
    Batch batch(rt);
    DeviceTensors t(batch, io, args().signature());
    std::vector<uint32_t> starts{0};
    for (int64_t s : p_.seq_len) starts.push_back(starts.back() + static_cast<uint32_t>(s));
    Buffer* token_starts = batch.buffer_with(starts);
    KernelBuffers buffers = t.bindings();
    buffers["token_starts"] = token_starts;
    const KernelParams params{{"num_tokens", p_.num_tokens()},
                              {"num_head", p_.num_head},
                              {"batches", p_.batches()},
                              {"row_words", p_.head_size * dtype_bits(p_.dtype) / 32}};
    const auto n = static_cast<uint32_t>(p_.num_tokens() * p_.num_head);
    batch.dispatch_invocations("reshape_and_cache_omni", buffers, params, n);
    t.download(io);
    return batch.submit();
  }

  int64_t stored_rows() const override {
    int64_t stored = 0;
    for (int64_t i = 0; i < p_.runs(); ++i)
      if (p_.slot_mapping[i] >= 0) stored += p_.kept(i);
    return stored;
  }

  CaseFigures figures() const override {
    return memory_figures(stored_rows(), p_.num_tokens() * p_.num_head);
  }

 private:
  OmniParams p_;
};

class OmniOperator final : public Operator {
 public:
  const Signature& signature() const override { return omni_signature(); }
  std::unique_ptr<OpCase> instantiate(Args a) const override {
    OmniParams p = parse_omni(a);
    return std::make_unique<OmniCase>(std::move(a), std::move(p));
  }
};

}  // namespace

std::unique_ptr<Operator> make_reshape_and_cache_omni_operator() { return std::make_unique<OmniOperator>(); }

}  // namespace kvbench
