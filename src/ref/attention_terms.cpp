// The pieces of attention outside the blocked reference (ref/attention.hpp): the fault
// names, PMX's ALiBi slopes and the quant_err figure.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "ref/attention.hpp"

namespace kvbench {

AttentionFault attention_fault(const std::string& name) {
  if (name == "softmax_no_max_subtraction") return AttentionFault::no_max_subtraction;
  if (name == "softmax_sum_f16") return AttentionFault::sum_f16;
  if (name == "pv_accumulate_f16") return AttentionFault::pv_f16;
  if (name == "tile_padding_counted") return AttentionFault::tile_padding_counted;
  if (name == "key_past_full_tile_dropped") return AttentionFault::key_past_full_tile_dropped;
  if (name == "head_dim_tail_stale") return AttentionFault::head_dim_tail_stale;
  return AttentionFault::none;
}

std::vector<double> alibi_slopes(int64_t n, double max_bias) {
  int64_t c = 1;
  while (c * 2 <= n) c *= 2;
  std::vector<double> s;
  for (int64_t k = 1; k <= c; ++k)
    s.push_back(std::exp2(-max_bias * static_cast<double>(k) / static_cast<double>(c)));
  for (int64_t k = 1; static_cast<int64_t>(s.size()) < n; k += 2)
    s.push_back(std::exp2(-(max_bias / 2) * static_cast<double>(k) / static_cast<double>(c)));
  return s;
}

std::string quant_error_text(const std::vector<double>& quantized, const std::vector<double>& unquantized) {
  double max_abs = 0, err2 = 0, ref2 = 0;
  for (size_t i = 0; i < unquantized.size(); ++i) {
    const double d = std::fabs(quantized[i] - unquantized[i]);
    max_abs = std::max(max_abs, d);
    err2 += d * d;
    ref2 += unquantized[i] * unquantized[i];
  }
  char buf[96];
  std::snprintf(buf, sizeof buf, "max_abs %.3g, rel_l2 %.3g", max_abs,
                ref2 > 0 ? std::sqrt(err2 / ref2) : 0.0);
  return buf;
}

}  // namespace kvbench
