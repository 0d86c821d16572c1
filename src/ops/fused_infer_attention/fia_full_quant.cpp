// aclnn.FusedInferAttentionScoreV3, full int8: generated codes and per-tensor scales
// (spec "Full int8").
#include "ops/fused_infer_attention/fia_full_quant.hpp"

#include <cstdint>
#include <cstring>

#include "core/float_format.hpp"
#include "core/parallel.hpp"
#include "core/rng.hpp"

namespace kvbench {

double fia_code_scale(const Args& a, const std::string& tensor) {
  const auto [lo, hi] = a.range(tensor);
  return std::max(std::fabs(lo), std::fabs(hi)) / 127.0;
}

void fia_fill_codes(const Args& a, Tensor& t) {
  const CounterRng rng(a.seed(), t.name());
  const auto range = a.range(t.name());  // a pair, not a structured binding: clang 14 cannot capture those
  const double lo = range.first, hi = range.second;
  const double scale = fia_code_scale(a, t.name());
  constexpr double big = 0x1.8p52;
  std::vector<double> x(t.numel());
  parallel_for(static_cast<int64_t>((x.size() + 4095) / 4096), a.threads(), [&](int64_t c) {
    for (size_t i = static_cast<size_t>(c) * 4096; i < std::min(x.size(), static_cast<size_t>(c + 1) * 4096);
         ++i)
      x[i] = std::clamp((rng.uniform(i, lo, hi) / scale + big) - big, -127.0, 127.0);
  });
  t.set_range(0, x.size(), x.data());
}

double fia_truncate_19_bits(double f32_value) {
  const float f = static_cast<float>(f32_value);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits &= 0xFFFFE000u;
  float g;
  std::memcpy(&g, &bits, 4);
  return g;
}

double fia_quant_scale1(const Args& a) {
  const auto [lo, hi] = a.range("quantScale1");
  return round_f32(CounterRng(a.seed(), "quantScale1").uniform(0, lo, hi));
}

double fia_deq_scale1(const Args& a) {
  return fia_truncate_19_bits(fia_code_scale(a, "query") * fia_code_scale(a, "key"));
}

double fia_deq_scale2(const Args& a) {
  return fia_truncate_19_bits(fia_code_scale(a, "value") / fia_quant_scale1(a));
}

double fia_full_quant_bound(double quant_scale1, int64_t dv, std::span<const QueryRow> rows,
                            const RowSource& values, int64_t keys, const std::vector<double>& row_max,
                            const std::vector<double>& row_lse) {
  const auto n = static_cast<size_t>(dv);
  std::vector<double> prefix((static_cast<size_t>(keys) + 1) * n, 0.0);  // [j][c]: sum of |v_c| over keys < j
  for (int64_t j = 0; j < keys; ++j) {
    const double* before = &prefix[static_cast<size_t>(j) * n];
    double* next = &prefix[(static_cast<size_t>(j) + 1) * n];
    values(j, next, 1);
    for (size_t c = 0; c < n; ++c) next[c] = before[c] + std::fabs(next[c]);
  }
  double atol = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    double sum = 0;
    for (size_t c = 0; c < n; ++c)
      sum = std::max(sum, prefix[static_cast<size_t>(rows[r].end) * n + c] -
                              prefix[static_cast<size_t>(rows[r].begin) * n + c]);
    const bool one_key = rows[r].end - rows[r].begin == 1;
    atol = std::max(atol, fia_full_quant_row_bound(quant_scale1, row_max[r], row_lse[r], sum, one_key));
  }
  return atol;
}

}  // namespace kvbench
