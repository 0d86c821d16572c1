// The comparator (src/check/compare.hpp) must be shown to FAIL on every kind of wrong
// output: a wrong value, an unwritten (still poisoned) element, a scribble on an element
// an in-place operator must not touch, and NaN/Inf mismatches.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "check/compare.hpp"
#include "core/float_format.hpp"

using namespace kvbench;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor filled(DType t, const std::vector<double>& v, Role role = Role::output) {
  Tensor x("out", t, {static_cast<int64_t>(v.size())}, role);
  for (size_t i = 0; i < v.size(); ++i) x.set(i, v[i]);
  return x;
}

// A plain f32 golden of the values v (their own exact values), and alternates where given.
Expected golden(std::vector<double> v, double atol = 0, double rtol = 0,
                const std::vector<double>& alternates = {}) {
  Expected e = Expected::output(filled(DType::f32, v), v, v);
  for (size_t i = 0; i < alternates.size(); ++i) e.set_alternate(i, alternates[i]);
  e.tolerance.atol = atol;
  e.tolerance.rtol = rtol;
  return e;
}

}  // namespace

TEST_CASE("compare: one wrong element is one violation, and it is the worst") {
  const Expected e = golden({1, 2, 3, 4}, 1e-3);
  const Tensor a = filled(DType::f32, {1, 2, 3.5, 4});
  const Metrics m = compare_output(e, a, a);
  CHECK_FALSE(m.passed());
  CHECK(m.violations == 1);
  CHECK(m.elements == 4);
  CHECK(m.worst_index == 2);
  CHECK(m.worst_actual == 3.5);
  CHECK(m.worst_golden == 3);
  CHECK(m.nonfinite_mismatches == 0);
  CHECK(compare_output(e, filled(DType::f32, {1, 2, 3, 4}), a).passed());
}

TEST_CASE("compare: an unwritten float element is still poisoned and fails") {
  const Expected e = golden({0.5, -1.0, 2.0, 0.0}, 1.0, 1.0);  // even a loose tolerance
  Tensor t("out", DType::f16, {4}, Role::output);
  poison_output(e, t);
  for (size_t i = 0; i < 4; ++i)
    if (i != 1) t.set(i, e.value().get(i));
  const Metrics m = compare_output(e, t, t);
  CHECK_FALSE(m.passed());
  CHECK(m.violations == 1);
  CHECK(m.worst_index == 1);
  CHECK(m.nonfinite_mismatches == 1);
}

TEST_CASE("compare: an unwritten element fails where NaN is permitted, a computed NaN passes") {
  // issue 63: sdpa_masked_nonfinite_v_causal permits NaN where a V row of weight 0 is not
  // finite; a kernel that left those elements unwritten passed on the NaN poison.
  for (DType dt : {DType::f16, DType::bf16, DType::f32}) {
    CAPTURE(dtype_name(dt));
    Expected e = Expected::output(filled(dt, {0.5, -1.0, 2.0}), {0.5, -1.0, 2.0}, {0.5, -1.0, 2.0});
    e.permit_nan(0);
    e.permit_nan(2);
    Tensor t("out", dt, {3}, Role::output);
    poison_output(e, t);
    CHECK(std::isnan(t.get(0)));
    t.set(1, -1.0);
    t.set(2, kNaN);  // computed: a quiet NaN
    const Metrics m = compare_output(e, t, t);
    CHECK(m.violations == 1);
    CHECK(m.unwritten == 1);
    CHECK(m.worst_index == 0);
    CHECK(m.boundary == 1);
    t.set(0, kNaN);
    CHECK(compare_output(e, t, t).passed());
  }
}

TEST_CASE("compare: a NaN golden is poisoned with a finite value, so it fails unwritten") {
  const Expected e = golden({kNaN, 1.0});
  Tensor t("out", DType::f32, {2}, Role::output);
  poison_output(e, t);
  t.set(1, 1.0);
  CHECK(std::isfinite(t.get(0)));
  const Metrics m = compare_output(e, t, t);
  CHECK(m.violations == 1);
  CHECK(m.worst_index == 0);
}

TEST_CASE("compare: an unwritten i8 element is poisoned away from golden and golden+-1") {
  const std::vector<double> g = {5, -1, 0, 127, -128, 64};
  std::vector<double> alternates;
  for (double x : g) alternates.push_back(x < 127 ? x + 1 : x - 1);
  const Expected e = golden(g, 0, 0, alternates);
  Tensor t("out", DType::i8, {6}, Role::output);
  poison_output(e, t);
  for (size_t i = 0; i < g.size(); ++i) {
    CHECK(std::fabs(t.get(i) - g[i]) > 1);
  }
  for (size_t i = 0; i < g.size(); ++i)
    if (i != 3) t.set(i, g[i]);
  const Metrics m = compare_output(e, t, t);
  CHECK_FALSE(m.passed());
  CHECK(m.violations == 1);
  CHECK(m.worst_index == 3);
}

TEST_CASE("compare: an unwritten s4 element is poisoned away from golden and golden+-1") {
  const std::vector<double> g = {-8, 7, -1, 0, 3};
  std::vector<double> alternates;
  for (double x : g) alternates.push_back(x < 7 ? x + 1 : x - 1);
  const Expected e = golden(g, 0, 0, alternates);
  Tensor t("out", DType::s4, {5}, Role::output);
  poison_output(e, t);
  for (size_t i = 0; i < g.size(); ++i) {
    CHECK(std::fabs(t.get(i) - g[i]) > 1);
  }
  for (size_t i = 0; i < g.size(); ++i)
    if (i != 2) t.set(i, g[i]);
  const Metrics m = compare_output(e, t, t);
  CHECK_FALSE(m.passed());
  CHECK(m.violations == 1);
  CHECK(m.worst_index == 2);
}

TEST_CASE("compare: in-place tensors compare untouched elements bit-exactly") {
  // Elements 1 and 2 are written by the operator; 0 and 3 must keep their bits.
  const Tensor before = filled(DType::f32, {0.0, 1.0, 2.0, 3.0}, Role::inplace);
  Expected e = Expected::unchanged(before);
  e.write(2, 20.0, 20.0);  // in any order
  e.write(1, 10.0, 10.0);
  e.finish();
  e.tolerance.atol = 1.0;
  Tensor after = filled(DType::f32, {0.0, 10.0, 20.0, 3.0}, Role::inplace);
  CHECK(compare_output(e, after, before).passed());

  SUBCASE("+0.0 -> -0.0 on an untouched element: equal in value, different in bits") {
    after.set(0, -0.0);
    const Metrics m = compare_output(e, after, before);
    CHECK_FALSE(m.passed());
    CHECK(m.untouched_changed == 1);
    CHECK(m.violations == 1);
    CHECK(m.worst_index == 0);
  }
  SUBCASE("an untouched element moved by less than the tolerance") {
    after.set(3, 3.5);
    const Metrics m = compare_output(e, after, before);
    CHECK_FALSE(m.passed());
    CHECK(m.untouched_changed == 1);
  }
}

TEST_CASE("compare: NaN and Inf mismatches fail; NaN against NaN passes") {
  const Expected loose = golden({1.0}, 1e30, 1e30);
  const Metrics nan_actual = compare_output(loose, filled(DType::f32, {kNaN}), filled(DType::f32, {0}));
  CHECK_FALSE(nan_actual.passed());
  CHECK(nan_actual.nonfinite_mismatches == 1);

  const Expected nan_golden = golden({kNaN}, 1e30, 1e30);
  const Metrics finite_actual =
      compare_output(nan_golden, filled(DType::f32, {1.0}), filled(DType::f32, {0}));
  CHECK_FALSE(finite_actual.passed());
  CHECK(finite_actual.nonfinite_mismatches == 1);

  const Expected pos_inf = golden({kInf}, 1e30, 1e30);
  CHECK_FALSE(compare_output(pos_inf, filled(DType::f32, {-kInf}), filled(DType::f32, {0})).passed());
  CHECK_FALSE(compare_output(pos_inf, filled(DType::f32, {3.0e38}), filled(DType::f32, {0})).passed());
  CHECK(compare_output(pos_inf, filled(DType::f32, {kInf}), filled(DType::f32, {0})).passed());

  const Metrics both_nan = compare_output(nan_golden, filled(DType::f32, {kNaN}), filled(DType::f32, {0}));
  CHECK(both_nan.passed());
  CHECK(both_nan.nonfinite_mismatches == 0);
}

TEST_CASE("compare: |a - g| == atol + rtol*|g| passes, one f32 step more fails") {
  // atol 0.25, rtol 0.125, g = 2: allowed 0.25 + 0.25 = 0.5, all exact in binary.
  const Expected e = golden({2.0}, 0.25, 0.125);
  CHECK(compare_output(e, filled(DType::f32, {2.5}), filled(DType::f32, {0})).passed());
  CHECK(compare_output(e, filled(DType::f32, {1.5}), filled(DType::f32, {0})).passed());
  const double above = 2.5 + 0x1p-22;  // next f32 after 2.5 (ulp in [2,4) is 2^-22)
  const double below = 1.5 - 0x1p-23;  // next f32 before 1.5 (ulp in [1,2) is 2^-23)
  CHECK_FALSE(compare_output(e, filled(DType::f32, {above}), filled(DType::f32, {0})).passed());
  CHECK_FALSE(compare_output(e, filled(DType::f32, {below}), filled(DType::f32, {0})).passed());
}

TEST_CASE("compare: the rounding-boundary alternate is accepted and counted") {
  const Expected e = golden({10, 20, 30}, 0, 0, {Expected::none, 21, Expected::none});
  const Metrics m = compare_output(e, filled(DType::i8, {10, 21, 30}), filled(DType::i8, {0, 0, 0}));
  CHECK(m.passed());
  CHECK(m.boundary == 1);
  CHECK_FALSE(compare_output(e, filled(DType::i8, {10, 22, 30}), filled(DType::i8, {0, 0, 0})).passed());
  CHECK_FALSE(compare_output(e, filled(DType::i8, {10, 19, 30}), filled(DType::i8, {0, 0, 0})).passed());
  CHECK_FALSE(compare_output(e, filled(DType::i8, {10, 20, 31}), filled(DType::i8, {0, 0, 0})).passed());
}

TEST_CASE("compare: max_abs, max_rel and rel_l2 on a hand example") {
  // golden {3, 4}, actual {3.75, 5}: errors {0.75, 1}; ||err|| = 1.25, ||g|| = 5.
  const Expected e = golden({3, 4}, 2.0);
  const Metrics m = compare_output(e, filled(DType::f32, {3.75, 5}), filled(DType::f32, {0, 0}));
  CHECK(m.passed());
  CHECK(m.max_abs == 1.0);
  CHECK(m.max_rel == 0.25);  // 0.75/3 = 1/4 = 0.25
  CHECK(m.rel_l2 == 0.25);   // 1.25 / 5
  CHECK(m.worst_index == 1);
}

TEST_CASE("index_string gives the row-major multi-index") {
  CHECK(index_string({2, 3}, 5) == "[1,2]");
  CHECK(index_string({2, 3}, 0) == "[0,0]");
  CHECK(index_string({2, 3, 4}, 23) == "[1,2,3]");
}
