#include "check/compare.hpp"

#include <cmath>
#include <stdexcept>

#include "core/float_format.hpp"

namespace kvbench {

std::string index_string(const Shape& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    idx[k] = flat % shape[k];
    flat /= shape[k];
  }
  return shape_string(idx);
}

double Metrics::err_over_scale() const {
  if (max_abs == 0) return 0;
  return scale > 0 ? max_abs / scale : INFINITY;
}

namespace {

bool within(double a, double g, const Tolerance& t) {
  if (std::isnan(g) || std::isnan(a)) return std::isnan(g) && std::isnan(a);
  if (std::isinf(g) || std::isinf(a)) return a == g;
  return std::fabs(a - g) <= t.atol + t.rtol * std::fabs(g);
}

}  // namespace

Metrics compare_output(const Expected& e, const Tensor& actual, const Tensor& before) {
  if (e.value.size() != actual.numel())
    throw std::logic_error("golden for " + e.tensor + " has " + std::to_string(e.value.size()) +
                           " elements, the tensor " + std::to_string(actual.numel()));
  Metrics m;
  m.tensor = e.tensor;
  m.elements = actual.numel();
  double err2 = 0, ref2 = 0, worst_error = -1;
  bool worst_bad = false;
  for (size_t i = 0; i < actual.numel(); ++i) {
    const double a = actual.get(i);
    const double g = e.value[i];
    bool bad = false;
    if (!e.is_touched(i)) {
      // Bit-exact: an untouched element must be exactly what it was before the dispatch.
      if (actual.bits(i) != before.bits(i)) {
        ++m.untouched_changed;
        bad = true;
      }
    } else if (!within(a, g, e.tolerance)) {
      const double alt = e.alternate.empty() ? Expected::none : e.alternate[i];
      if (!std::isnan(alt) && within(a, alt, e.tolerance)) {
        ++m.boundary;
      } else {
        bad = true;
        if (!std::isfinite(a) || !std::isfinite(g)) ++m.nonfinite_mismatches;
      }
    }
    double error = 0;
    if (std::isfinite(a) && std::isfinite(g)) {
      error = std::fabs(a - g);
      m.max_abs = std::max(m.max_abs, error);
      if (g != 0) m.max_rel = std::max(m.max_rel, error / std::fabs(g));
      err2 += error * error;
      ref2 += g * g;
      if (e.is_touched(i)) m.scale = std::max(m.scale, std::fabs(g));
    } else if (bad) {
      error = INFINITY;
    }
    if (bad) ++m.violations;
    // The worst element: the first violation with the largest error, else the largest error.
    if ((bad && !worst_bad) || (bad == worst_bad && error > worst_error) || m.worst_index < 0) {
      worst_bad = bad;
      worst_error = error;
      m.worst_index = static_cast<int64_t>(i);
      m.worst_actual = a;
      m.worst_golden = g;
      m.worst_untouched = !e.is_touched(i);
    }
  }
  m.rel_l2 = ref2 > 0 ? std::sqrt(err2 / ref2) : (err2 > 0 ? INFINITY : 0.0);
  return m;
}

void poison_output(const Expected& e, Tensor& t) {
  const DType dt = t.dtype();
  const int bits = dtype_bits(dt);
  for (size_t i = 0; i < t.numel(); ++i) {
    if (!e.is_touched(i)) continue;
    const double g = e.value[i];
    if (dtype_is_float(dt)) {
      t.set(i, std::isnan(g) ? 1234.5 : std::nan(""));
    } else {
      const uint64_t golden_bits = static_cast<uint64_t>(static_cast<int64_t>(g));
      t.set_bits(i, golden_bits ^ (uint64_t{1} << (bits - 1)));
    }
  }
}

}  // namespace kvbench
