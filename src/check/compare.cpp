#include "check/compare.hpp"

#include <algorithm>
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

// Elements compared per bulk read of the actual and golden tensors.
constexpr size_t kCompareChunk = 4096;

// Whether actual a agrees with golden g under `allowed` (the element's bound, or atol +
// rtol |g|): NaN only with NaN, an infinity only with itself, else |a - g| <= allowed.
bool within(double a, double g, double allowed) {
  if (std::isnan(g) || std::isnan(a)) return std::isnan(g) && std::isnan(a);
  if (std::isinf(g) || std::isinf(a)) return a == g;
  return std::fabs(a - g) <= allowed;
}

// |a - g| over the element's allowance (see Metrics::max_over_tolerance).
double over_tolerance(double a, double g, double allowed) {
  if (std::isnan(g) || std::isnan(a)) return std::isnan(g) && std::isnan(a) ? 0 : INFINITY;
  if (std::isinf(g) || std::isinf(a)) return a == g ? 0 : INFINITY;
  const double error = std::fabs(a - g);
  if (error == 0) return 0;
  return allowed > 0 ? error / allowed : INFINITY;
}

}  // namespace

Metrics compare_output(const Expected& e, const Tensor& actual, const Tensor& before) {
  const Tensor& golden = e.value();
  if (golden.numel() != actual.numel())
    throw std::logic_error("golden for " + e.tensor + " has " + std::to_string(golden.numel()) +
                           " elements, the tensor " + std::to_string(actual.numel()));
  Metrics m;
  m.tensor = e.tensor;
  m.elements = actual.numel();
  double err2 = 0, ref2 = 0, worst_error = -1;
  bool worst_bad = false;
  // The written elements, the alternates and the NaN permissions ascend, as i does: a
  // cursor meets each.
  const auto written = e.written();
  const auto alternates = e.alternates();
  const auto nan_permitted = e.nan_permitted();
  size_t next_written = 0, next_alternate = 0, next_nan = 0;
  m.per_element_bound = e.has_bound() && !e.tolerance_override;
  const uint64_t unwritten_bits = unwritten_nan_bits(actual.dtype());
  std::vector<double> actual_chunk(kCompareChunk), golden_chunk(kCompareChunk);
  for (size_t begin = 0; begin < actual.numel(); begin += kCompareChunk) {
    const size_t count = std::min(kCompareChunk, actual.numel() - begin);
    actual.get_range(begin, count, actual_chunk.data());
    golden.get_range(begin, count, golden_chunk.data());
    for (size_t k = 0; k < count; ++k) {
      const size_t i = begin + k;
      const double a = actual_chunk[k], g = golden_chunk[k];
      bool touched = !e.is_in_place();
      if (!touched && next_written < written.size() && written[next_written].index == i) {
        touched = true;
        ++next_written;
      }
      double alt = Expected::none;
      if (next_alternate < alternates.size() && alternates[next_alternate].index == i)
        alt = alternates[next_alternate++].value;
      // A NaN a permitted implementation gives where the golden is finite: accepted like an
      // alternate (counted in `boundary`).
      bool nan_ok = false;
      if (next_nan < nan_permitted.size() && nan_permitted[next_nan] == i) {
        // Not the poison: a permitted NaN is computed (quiet), never left unwritten.
        nan_ok = !(unwritten_bits && std::isnan(a) && actual.bits(i) == unwritten_bits);
        if (!nan_ok) ++m.unwritten;
        ++next_nan;
      }
      const double allowed = touched ? e.allowed(i, g) : 0;
      bool bad = false;
      if (touched) {
        double over = over_tolerance(a, g, allowed);
        if (!std::isnan(alt)) over = std::min(over, over_tolerance(a, alt, allowed));
        if (nan_ok && std::isnan(a)) over = 0;
        m.max_over_tolerance = std::max(m.max_over_tolerance, over);
      }
      if (!touched) {
        // Bit-exact: an untouched element must be exactly what it was before the dispatch.
        if (actual.bits(i) != before.bits(i)) {
          ++m.untouched_changed;
          m.max_over_tolerance = INFINITY;
          bad = true;
        }
      } else if (!within(a, g, allowed)) {
        if ((!std::isnan(alt) && within(a, alt, allowed)) || (nan_ok && std::isnan(a))) {
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
        if (touched) m.scale = std::max(m.scale, std::fabs(g));
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
        m.worst_untouched = !touched;
        m.worst_allowed = allowed;
      }
    }
  }
  m.rel_l2 = ref2 > 0 ? std::sqrt(err2 / ref2) : (err2 > 0 ? INFINITY : 0.0);
  return m;
}

uint64_t unwritten_nan_bits(DType dtype) {
  switch (dtype) {
    case DType::f16: return 0x7D5A;  // quiet bits clear, payload nonzero: signalling
    case DType::bf16: return 0x7FA5;
    case DType::f32: return 0x7FA5A5A5;
    default: return 0;
  }
}

void poison_output(const Expected& e, Tensor& t) {
  const DType dt = t.dtype();
  const int bits = dtype_bits(dt);
  const uint64_t unwritten = unwritten_nan_bits(dt);
  const auto poison = [&](size_t i) {
    const double g = e.value().get(i);
    if (dtype_is_float(dt)) {
      if (std::isnan(g))
        t.set(i, 1234.5);
      else if (unwritten)
        t.set_bits(i, unwritten);
      else
        t.set(i, std::nan(""));
    } else {
      const uint64_t golden_bits = static_cast<uint64_t>(static_cast<int64_t>(g));
      t.set_bits(i, golden_bits ^ (uint64_t{1} << (bits - 1)));
    }
  };
  if (e.is_in_place())
    for (const WrittenElement& w : e.written()) poison(w.index);
  else
    for (size_t i = 0; i < t.numel(); ++i) poison(i);
}

}  // namespace kvbench
