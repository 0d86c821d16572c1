#pragma once
// A named kernel fault (specs/coverage.md "Fault catalogue"): a small deviation a real
// kernel makes, declared beside its operator's signature and applied to the golden
// reference itself (OpCase::set_fault), so `kvbench coverage --faults` can measure which
// cases would fail a kernel that has it.
#include <string>
#include <vector>

namespace kvbench {

struct Fault {
  std::string name;    // unique within the operator, e.g. "softmax_no_max_subtraction"
  std::string bug;     // what the faulty kernel does
  std::string source;  // where the bug class was seen (an issue, a commit), or empty
};

// A permitted implementation (specs/comparison.md "Permitted implementations"), the dual of
// a fault: precision steps the operator's definition allows, declared beside its signature
// and applied to the reference (OpCase::set_variant), so `kvbench coverage --variants` can
// show that every case's bound takes it.
struct Variant {
  std::string name;    // unique within the operator, e.g. "flash_p_f32"
  std::string what;    // what the implementation computes differently from the golden
  std::string source;  // the document, or the upstream kernel (repository, path, commit)
};

// The faults of the shared attention reference (ref/attention.hpp AttentionFault), which
// MHCA, SDPA and FIA each list in their own catalogue.
inline std::vector<Fault> with_attention_faults(std::vector<Fault> own) {
  own.insert(
      own.begin(),
      {{"softmax_no_max_subtraction",
        "exp(s) in f32 without subtracting the row max: overflows to inf once a score passes 88.72, "
        "so the row is NaN",
        "issue 36 (a planted fault passed every MHCA and SDPA case)"},
       {"softmax_sum_f16", "the softmax denominator sum(exp(s - max)) accumulated in f16", ""},
       {"pv_accumulate_f16", "P.V accumulated in f16 (each partial sum rounded to f16)",
        "issue 36 (failed 2 of 117 MHCA cases, by 1.05x and 1.33x)"},
       {"tile_padding_counted",
        "keys in tiles of 64: the last tile's padding lanes (K and V zero-filled) counted in the softmax "
        "with "
        "score 0 when the row's key count is not a multiple of 64",
        "flashinfer#3716 (padding lanes counted when seq_len is not a multiple of the tile)"},
       {"key_past_full_tile_dropped",
        "a row of 64k + 1 keys (k >= 1) loses its last key: the lone key one past the last full 64-key "
        "tile is never loaded",
        "vllm#54035 (mismatches from seqlen 97, one past a 96-key tile)"},
       {"head_dim_tail_stale",
        "q . k in 32-lane chunks: when the head size is not a multiple of 32, the last chunk's idle lanes "
        "keep the previous chunk's values, so q[d - 32] k[d - 32] is added again for each idle lane d",
        "exllamav3#316 (uninitialized reads at head size 72)"}});
  return own;
}

}  // namespace kvbench

namespace kvbench {

// The permitted implementations of the shared attention reference (attention_steps), which
// MHCA, SDPA and FIA each list in their own catalogue before their own.
std::vector<Variant> with_attention_variants(std::vector<Variant> own);

}  // namespace kvbench
