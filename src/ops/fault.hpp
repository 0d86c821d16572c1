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

// The faults of the shared attention reference (ref/attention.hpp AttentionFault), which
// MHCA, SDPA and FIA each list in their own catalogue.
inline std::vector<Fault> with_attention_faults(std::vector<Fault> own) {
  own.insert(own.begin(),
             {{"softmax_no_max_subtraction",
               "exp(s) in f32 without subtracting the row max: overflows to inf once a score passes 88.72, "
               "so the row is NaN",
               "issue 36 (a planted fault passed every MHCA and SDPA case)"},
              {"softmax_sum_f16", "the softmax denominator sum(exp(s - max)) accumulated in f16", ""},
              {"pv_accumulate_f16", "P.V accumulated in f16 (each partial sum rounded to f16)",
               "issue 36 (failed 2 of 117 MHCA cases, by 1.05x and 1.33x)"},
              {"pv_zero_weight_nan",
               "P.V multiplies every key of its range by its weight, 0 for a masked key, so a masked key's "
               "infinite or NaN V makes the row NaN (0 * inf)",
               "kvbench's three kernels before b186a10, and torch's softmax @ V"}});
  return own;
}

}  // namespace kvbench
