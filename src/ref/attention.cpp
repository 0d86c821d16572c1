#include "ref/attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "ref/quant.hpp"

namespace kvbench {

std::vector<double> alibi_slopes(int64_t n) {
  int64_t c = 1;
  while (c * 2 <= n) c *= 2;
  std::vector<double> s;
  for (int64_t k = 1; k <= c; ++k) s.push_back(std::exp2(-8.0 * static_cast<double>(k) / static_cast<double>(c)));
  for (int64_t k = 1; static_cast<int64_t>(s.size()) < n; k += 2)
    s.push_back(std::exp2(-4.0 * static_cast<double>(k) / static_cast<double>(c)));
  return s;
}

double attend_row(const AttentionRow& a, const double* q, RowsView k, RowsView v, double* out) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> p(static_cast<size_t>(a.kv_len));
  double m = -kInf;
  for (int64_t t = 0; t < a.kv_len; ++t) {
    const double* kt = k.row(t);
    double dot = 0;
    for (int64_t d = 0; d < a.dk; ++d) dot += q[d] * kt[d];
    double s = a.divide_by_scale ? dot / a.scale : dot * a.scale;
    if (a.bias) s = a.bias(t, s);
    p[t] = s;
    m = std::max(m, s);
  }
  if (m == -kInf) {  // nothing to attend to
    std::fill(out, out + a.dv, a.empty == EmptyRow::nan ? std::numeric_limits<double>::quiet_NaN() : 0.0);
    return kInf;
  }
  double sum = 0;
  for (double& x : p) sum += (x = std::exp(x - m));
  for (double& x : p) {
    x /= sum;
    if (a.round_p) x = round_to(*a.round_p, x);
  }
  std::fill(out, out + a.dv, 0.0);
  for (int64_t t = 0; t < a.kv_len; ++t) {
    const double* vt = v.row(t);
    for (int64_t d = 0; d < a.dv; ++d) out[d] += p[t] * vt[d];
  }
  return m + std::log(sum);
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
  std::snprintf(buf, sizeof buf, "max_abs %.3g, rel_l2 %.3g", max_abs, ref2 > 0 ? std::sqrt(err2 / ref2) : 0.0);
  return buf;
}

}  // namespace kvbench
