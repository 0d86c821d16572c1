#include "ref/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

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

std::vector<double> softmax(const std::vector<double>& scores) {
  double m = -std::numeric_limits<double>::infinity();
  for (double v : scores) m = std::max(m, v);
  std::vector<double> p(scores.size());
  if (std::isinf(m) && m < 0) {
    std::fill(p.begin(), p.end(), std::numeric_limits<double>::quiet_NaN());
    return p;
  }
  double sum = 0;
  for (size_t i = 0; i < scores.size(); ++i) sum += (p[i] = std::exp(scores[i] - m));
  for (double& v : p) v /= sum;
  return p;
}

}  // namespace kvbench
