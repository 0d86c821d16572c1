#include "ops/attention/attention_golden.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "ops/fault.hpp"
#include "ref/attention_bound.hpp"

namespace kvbench {

void set_attention_bound(Expected& e, DType dtype, std::vector<uint16_t> bound, const NanPermits& nan_ok) {
  const size_t n = e.value().numel();
  if (bound.size() != n)
    throw std::logic_error("set_attention_bound: " + e.tensor + " has " + std::to_string(n) + " elements");
  const std::vector<double>& exact = e.exact();
  for (size_t i = 0; i < n; ++i) {
    const double golden = exact.empty() ? e.value().get(i) : exact[i];
    // A non-finite golden is matched by its own value (the comparator's NaN and infinity
    // rules), so it has no bound: 0. A finite one whose derivation met 0 * inf (an infinite
    // V beside a rounded weight) is bounded by nothing: +inf.
    const float before = bf16_widened(bound[i]);
    if (!std::isfinite(golden))
      bound[i] = 0;
    else
      bound[i] = std::isnan(before) ? bf16_at_or_above(INFINITY)
                                    : bf16_at_or_above(f32_at_or_above(rounded_bound(dtype, golden, before)));
  }
  for (const int64_t i : nan_ok.sorted()) {
    const auto at = static_cast<size_t>(i);
    if (at >= n) throw std::logic_error("set_attention_bound: NaN permission past " + e.tensor);
    if (!std::isnan(exact.empty() ? e.value().get(at) : exact[at])) e.permit_nan(at);
  }
  e.set_bound_bf16(std::move(bound));
}

void set_attention_bound(Expected& e, DType dtype, const std::vector<double>& bound) {
  std::vector<uint16_t> bits(bound.size());
  for (size_t i = 0; i < bound.size(); ++i) bits[i] = bf16_at_or_above(f32_at_or_above(bound[i]));
  set_attention_bound(e, dtype, std::move(bits), NanPermits{});
}

namespace {

// Upstream sources of the variants (specs/comparison.md "Permitted implementations").
constexpr const char* kPmxCuda =
    "OpenPPL/ppl.llm.kernel.cuda@255f3c8 src/ppl/kernel/llm/cuda/pmx/multi_head_cache_attention/kernel.cu";
constexpr const char* kOnednnMicro = "uxlfoundation/oneDNN@3f27bec2 src/gpu/intel/sdpa/micro.cl";

}  // namespace

std::vector<Variant> with_attention_variants(std::vector<Variant> own) {
  own.insert(
      own.begin(),
      {{"f32_ascending",
        "every operation in f32, each sum in ascending order, P rounded as the definition rounds it",
        "the operator's formula in a plain f32 kernel (kvbench's own, shaders/attention_core.glsl)"},
       {"f32_descending", "as f32_ascending, every sum (over keys and over channels) from its last term down",
        "f32 accumulation in any order (a GPU's reduction trees)"},
       {"flash_p_f32", "P kept in f32, never rounded, normalized after P @ V",
        std::string("FlashAttention-2 (Dao 2023, Algorithm 1); PMX's CUDA decode kernels, ") + kPmxCuda},
       {"unnormalized_p",
        "exp(s - max) rounded to the query's dtype before P @ V, the f32 sum divided out at the end",
        std::string("oneDNN's micro-SDPA, ") + kOnednnMicro +
            "; PMX's GQA tensor-core decode and flash prefill"},
       {"split_k_64",
        "keys in splits of 64, each with its own max, sum and P @ V in f32, merged by rescaling (flash "
        "decoding)",
        "flash decoding (kvbench's kernels split at 256 and 1024 keys; PMX's split-K decode)"},
       {"exp2_prescale", "exp(x) as exp2(x * f32(log2 e)) with the scores and the max prescaled, P in f32",
        std::string("PMX's flash prefill (exp2f), ") + kOnednnMicro + " (native_exp2)"},
       {"ieee_zero_weight",
        "softmax(s) @ V over every key of the sequence: a key of weight 0 multiplies its V (0 * inf = NaN)",
        "torch's softmax @ V: PMX's reference (OpenPPL/ppl.pmx) and Ascend's golden (examples/torch)"}});
  return own;
}

std::optional<PrecisionSteps> attention_steps(const std::string& variant, DType p_dtype) {
  using P = PrecisionSteps::P;
  if (variant == "f32_ascending") return PrecisionSteps{};
  if (variant == "f32_descending") return PrecisionSteps{.descending = true};
  if (variant == "flash_p_f32") return PrecisionSteps{.p = P::unrounded};
  if (variant == "unnormalized_p") return PrecisionSteps{.p = P::unnormalized, .p_dtype = p_dtype};
  if (variant == "split_k_64") return PrecisionSteps{.p = P::unrounded, .split = 64};
  if (variant == "exp2_prescale") return PrecisionSteps{.p = P::unrounded, .exp2 = true};
  if (variant == "ieee_zero_weight") return PrecisionSteps{.ieee_zero_weight = true};
  return std::nullopt;
}

void past_sequence_nan(const std::vector<QueryRow>& rows, const RowSource& values, int64_t dv, int64_t end,
                       int64_t page_end) {
  std::vector<double> v(static_cast<size_t>(dv));
  for (int64_t t = end; t < page_end; ++t) {
    values(t, v.data(), 1);
    for (int64_t d = 0; d < dv; ++d)
      if (!std::isfinite(v[static_cast<size_t>(d)]))
        for (const QueryRow& r : rows) r.out[d] = std::numeric_limits<double>::quiet_NaN();
  }
}

}  // namespace kvbench
