// The golden of one output (src/check/expected.hpp): an in-place output holds its tensor
// and the records of the elements written, in ascending order whatever order the reference
// wrote them in; a plain output keeps exact values apart only where they differ.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "check/compare.hpp"
#include "check/expected.hpp"

using namespace kvbench;

namespace {

Tensor cache_of(std::vector<double> v) {
  Tensor t("cache", DType::i8, {static_cast<int64_t>(v.size())}, Role::inplace);
  t.set_range(0, v.size(), v.data());
  return t;
}

}  // namespace

TEST_CASE("Expected in place: writes in any order read back ascending; the rest keeps its initial value") {
  const Tensor initial = cache_of({1, 2, 3, 4, 5, 6});
  Expected e = Expected::unchanged(initial);
  const double row[2] = {-7, 8}, quotients[2] = {-7.25, 7.75};
  e.write_row(4, 2, row, quotients);
  e.write(1, 9, 9.5);
  e.set_alternate(5, 7);
  e.set_alternate(1, 10);
  CHECK_THROWS_AS(e.written(), std::logic_error);  // read before finish(): out of order
  e.finish();
  REQUIRE(e.written().size() == 3);
  CHECK(e.written()[0].index == 1);
  CHECK(e.written()[0].exact == 9.5);
  CHECK(e.written()[1].index == 4);
  CHECK(e.written()[2].exact == 7.75);
  CHECK(e.value().get(0) == 1);
  CHECK(e.value().get(1) == 9);
  CHECK(e.value().get(5) == 8);
  CHECK(initial.get(5) == 6);  // the input is not the golden
  CHECK(e.is_touched(4));
  CHECK_FALSE(e.is_touched(3));
  CHECK(e.alternate_at(1) == 10);
  CHECK(std::isnan(e.alternate_at(4)));
  CHECK(e.alternates_in(2, 6).size() == 1);
  CHECK(e.alternates_in(2, 6)[0].index == 5);
}

TEST_CASE("Expected in place: an element written twice is a bug in the reference") {
  Expected e = Expected::unchanged(cache_of({0, 0, 0}));
  e.write(2, 1, 1);
  e.write(0, 1, 1);
  e.write(2, 3, 3);
  CHECK_THROWS_AS(e.finish(), std::logic_error);
}

TEST_CASE(
    "Expected in place: records in a few ascending runs or in descending order read back ascending, a repeat "
    "refused") {
  // Three interleaved ascending runs, or a descending order (one run per element): either
  // way 0, 1, ..., n - 1 with their exacts.
  for (const int runs : {3, 200}) {
    CAPTURE(runs);
    const int n = 600;
    Expected e = Expected::unchanged(cache_of(std::vector<double>(n, 0)));
    for (int r = 0; r < runs; ++r)
      for (int i = r; i < n; i += runs) e.write(runs == 3 ? i : n - 1 - i, 1, runs == 3 ? i : n - 1 - i);
    e.finish();
    REQUIRE(e.written().size() == n);
    for (int i = 0; i < n; ++i) {
      CHECK(e.written()[i].index == static_cast<uint64_t>(i));
      CHECK(e.written()[i].exact == i);
    }
    Expected twice = Expected::unchanged(cache_of(std::vector<double>(n, 0)));
    for (int i = 0; i < n; ++i) twice.write(i, 1, 1);
    twice.write(n / 2, 1, 1);  // a second run holding an element of the first
    CHECK_THROWS_AS(twice.finish(), std::logic_error);
  }
}

TEST_CASE("Expected plain: exact values kept apart only once one differs from its value") {
  const Tensor like("y", DType::f16, {4}, Role::output);
  Expected same = Expected::output(like);
  const double v[2] = {0.5, -1.0};
  same.set_row(0, 2, v, v);
  same.set_row(2, 2, v, v);
  CHECK(same.exact().empty());  // expected_f64 is the values: a file widens them

  Expected differs = Expected::output(like);
  const double exact[2] = {0.5000001, -1.0};
  differs.set_row(2, 2, v, v);
  differs.set_row(0, 2, v, exact);
  REQUIRE(differs.exact().size() == 4);
  CHECK(differs.exact()[0] == 0.5000001);
  CHECK(differs.exact()[1] == -1.0);
  CHECK(differs.exact()[2] == 0.5);  // set before the first difference: its value
  CHECK(differs.value().get(0) == 0.5);
}

TEST_CASE(
    "compare: an in-place golden's untouched elements are the initial bits, its written ones the golden") {
  const Tensor before = cache_of({1, 2, 3, 4});
  Expected e = Expected::unchanged(before);
  e.write(2, 30, 30.2);
  e.finish();
  Tensor after = before;
  after.set(2, 30);
  CHECK(compare_output(e, after, before).passed());
  after.set(2, 31);  // the written element wrong
  CHECK(compare_output(e, after, before).violations == 1);
  after.set(2, 30);
  after.set(3, 5);  // an untouched one changed
  const Metrics m = compare_output(e, after, before);
  CHECK(m.untouched_changed == 1);
  CHECK(m.worst_index == 3);
  CHECK(m.worst_untouched);
  // Poisoning hits the written element only.
  Tensor poisoned = before;
  poison_output(e, poisoned);
  CHECK(poisoned.get(0) == 1);
  CHECK(poisoned.get(3) == 4);
  CHECK(std::fabs(poisoned.get(2) - 30) > 1);
}

TEST_CASE("Expected: a golden whose every element accepts anything is named vacuous (issue 63)") {
  // An SDPA case with a V scale of inf: every element's bound infinite or NaN permitted.
  Tensor t("output", DType::f32, {3}, Role::output);
  const std::vector<double> v = {0.5, -1.0, 2.0};
  t.set_range(0, v.size(), v.data());
  Expected e = Expected::output(t, v, v);
  e.set_bound({INFINITY, 0.25f, INFINITY});
  e.permit_nan(1);
  e.finish();
  const auto why = accepts_any_output(e);
  REQUIRE(why.has_value());
  CHECK(why->find("output: the golden accepts any output (2 of 3 elements") == 0);
  // One element that can fail makes it a test.
  Expected f = Expected::output(t, v, v);
  f.set_bound({INFINITY, 0.25f, INFINITY});
  f.finish();
  CHECK_FALSE(accepts_any_output(f).has_value());
  // A golden without bounds (atol/rtol) is never vacuous here.
  CHECK_FALSE(accepts_any_output(Expected::output(t, v, v)).has_value());
}

TEST_CASE("Expected: format 5's BF16 bound is the bf16 at or above the f32, compared widened") {
  CHECK(bf16_at_or_above(0.0f) == 0);
  CHECK(bf16_at_or_above(INFINITY) == 0x7F80);
  CHECK(bf16_at_or_above(1.0f) == 0x3F80);                               // exact stays
  CHECK(bf16_widened(bf16_at_or_above(1.0f + 0x1p-23f)) == 1.0078125f);  // up, never down
  CHECK(bf16_widened(bf16_at_or_above(0x1p-149f)) == 0x1p-133f);         // the least subnormal: up too
  for (const float x : {1e-30f, 0.3f, 3.0e7f, 1.17e-38f, 3.0e38f}) {
    const float w = bf16_widened(bf16_at_or_above(x));
    CHECK(w >= x);
    CHECK(w <= x * (1 + 0x1p-7f));
  }
  CHECK(std::isinf(bf16_widened(bf16_at_or_above(3.4e38f))));  // past bf16's largest finite
  Tensor t("output", DType::f32, {2}, Role::output);
  const std::vector<double> v = {0.5, -1.0};
  t.set_range(0, v.size(), v.data());
  Expected e = Expected::output(t, v, v);
  e.set_bound_bf16({bf16_at_or_above(0.25f), bf16_at_or_above(0.3f)});
  CHECK(e.bound_is_bf16());
  CHECK(e.bound_bytes().size() == 4);
  CHECK(e.allowed(1, -1.0) == bf16_widened(bf16_at_or_above(0.3f)));
  CHECK_THROWS_AS(e.set_bound_bf16({0xBF80, 0}), std::logic_error);  // -1: refused as set_bound refuses it
}
