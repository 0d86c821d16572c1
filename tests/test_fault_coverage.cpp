// kvbench coverage --faults: the error-over-tolerance metric, the shared attention faults
// on rows whose faulty result is derived by hand, a tiny DequantizeGroup case whose
// fault effect is derived from its inputs, detection and nearest miss, and the catalogue.
#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "cases/case_loader.hpp"
#include "check/compare.hpp"
#include "core/float_format.hpp"
#include "core/parallel.hpp"
#include "coverage/fault_coverage.hpp"
#include "ref/attention.hpp"

using namespace kvbench;

namespace {

std::vector<SelectedCase> suite_of(const nlohmann::json& doc, const RunOptions& options = {}) {
  auto loaded = expand_case_document(doc, "t.json", options);
  std::vector<SelectedCase> out;
  for (auto& def : loaded.cases) {
    auto op = instantiate_case(*find_operator(def.op), def, options);
    out.push_back({def, std::move(op)});
  }
  return out;
}

// One query row (dk 1) over keys with these scores and dk-1 values, with `fault`.
double attend_one(const std::vector<double>& scores, const std::vector<double>& values,
                  AttentionFault fault) {
  const double q = 1;
  double out = 0;
  const QueryRow row{.q = &q, .begin = 0, .end = static_cast<int64_t>(scores.size()), .out = &out};
  const AttentionBlock a{.dk = 1, .dv = 1, .fault = fault};
  attend(a, std::span(&row, 1), RowsView{scores.data(), 1}, RowsView{values.data(), 1}, nullptr);
  return out;
}

const FaultSummary& summary_of(const FaultCoverage& r, const std::string& op, const std::string& fault) {
  for (const auto& o : r.operators)
    for (const auto& f : o.faults)
      if (o.op == op && f.fault.name == fault) return f;
  FAIL("no fault " << fault);
  throw std::logic_error("unreachable");
}

nlohmann::json onednn_case(double atol) {
  return nlohmann::json::parse(R"({"op": "kvbench.DequantizeGroup", "name": "tiny", "seed": 7,
    "attributes": {"formula": "onednn", "bits": 8, "signed": true, "with_zero_point": true, "group_size": 2},
    "shapes": {"rows": 1, "length": 4}, "dtypes": {"scale": "f32", "y": "f32"},
    "tolerance": {"y": {"atol": )" +
                               std::to_string(atol) + R"(, "rtol": 0, "reason": "test"}}})");
}

}  // namespace

TEST_CASE(
    "compare: max error over tolerance, the alternate taken when nearer, +inf for a NaN or exact mismatch") {
  Tensor like("y", DType::f32, {3}, Role::output);
  Expected e = Expected::output(like, {1.0, 2.0, 4.0}, {1.0, 2.0, 4.0});
  e.set_alternate(2, 5.0);
  e.finish();
  e.tolerance = {.atol = 0.1, .rtol = 0};
  Tensor actual("y", DType::f32, {3}, Role::output);
  for (size_t i = 0; i < 3; ++i) actual.set(i, std::vector<double>{1.0, 2.25, 4.96}[i]);
  Metrics m = compare_output(e, actual, actual);
  CHECK(m.max_over_tolerance == doctest::Approx(2.5));  // 0.25 / 0.1; element 2 is 0.04 from its alternate
  CHECK(m.violations == 1);
  actual.set(0, std::nan(""));
  CHECK(std::isinf(compare_output(e, actual, actual).max_over_tolerance));
  e.tolerance = {};  // exact: any difference is a mismatch no tolerance takes
  actual.set(0, 1.0);
  CHECK(std::isinf(compare_output(e, actual, actual).max_over_tolerance));
}

TEST_CASE("attention faults: f32 exp without the max overflows past 88.72, f16 P.V loses a half-ulp term") {
  // Scores 100 and 0: exp(100) is inf in f32, inf / inf is NaN; the golden is ~v[0].
  CHECK(attend_one({100, 0}, {1, 2}, AttentionFault::none) == doctest::Approx(1.0));
  CHECK(std::isnan(attend_one({100, 0}, {1, 2}, AttentionFault::no_max_subtraction)));
  // At 80 (the largest score of the suite before issue 36) it stays finite and near the golden.
  CHECK(attend_one({80, 0}, {1, 2}, AttentionFault::no_max_subtraction) ==
        doctest::Approx(1.0).epsilon(1e-6));
  // Equal scores: p = 1/2 each; 0.5 * 1 + 0.5 * 2^-11 = 0.5 + 2^-12, a tie in f16 at 0.5 (ulp
  // 2^-11) that rounds to even: the f16 accumulator keeps 0.5.
  CHECK(attend_one({0, 0}, {1, std::ldexp(1.0, -11)}, AttentionFault::none) == 0.5 + std::ldexp(1.0, -12));
  CHECK(attend_one({0, 0}, {1, std::ldexp(1.0, -11)}, AttentionFault::pv_f16) == 0.5);
}

TEST_CASE("fault coverage: a tiny onednn case, the zero point's order derived from its inputs") {
  auto suite = suite_of(onednn_case(0.01));
  REQUIRE(suite.size() == 1);
  const TensorSet in = suite[0].op->make_tensors(OutputData::none);
  // golden f32((q - zp) * s), faulty f32(f32(q * s) - zp): apart by |zp (1 - s)| up to f32 rounding.
  double by_hand = 0;
  for (size_t k = 0; k < 4; ++k) {
    const double q = in.at("x").get(k), s = in.at("scale").get(k / 2), zp = in.at("zero_point").get(k / 2);
    by_hand = std::max(by_hand, std::fabs(round_f32(round_f32(q * s) - zp) - round_f32((q - zp) * s)) / 0.01);
  }
  REQUIRE(by_hand > 1);
  const FaultCoverage r = compute_fault_coverage(suite);
  REQUIRE(r.cases.size() == 1);
  // Only the onednn fault applies: no ppl product, no ascend offset, no int4, no partial group.
  REQUIRE(r.cases[0].faults.size() == 1);
  CHECK(r.cases[0].faults[0].fault == "zero_point_after_scale");
  CHECK(r.cases[0].faults[0].over_tolerance == doctest::Approx(by_hand));
  CHECK(r.cases[0].faults[0].detected);
  const FaultSummary& s = summary_of(r, "kvbench.DequantizeGroup", "zero_point_after_scale");
  CHECK(s.detected_by == std::vector<std::string>{"tiny"});
  CHECK(summary_of(r, "kvbench.DequantizeGroup", "offset_subtracted").applies == 0);
  CHECK(r.undetected() == 11);  // the other eleven apply to no case
  const nlohmann::json j = fault_json(r);
  CHECK(j["operators"]["kvbench.DequantizeGroup"]["faults"].size() == 12);
  CHECK(j["operators"]["kvbench.DequantizeGroup"]["faults"][1]["detected_by"][0] == "tiny");

  // The same fault under a tolerance 1e5 times looser: a miss, with its case as the nearest.
  auto loose = suite_of(onednn_case(1000));
  const FaultCoverage m = compute_fault_coverage(loose);
  const FaultSummary& miss = summary_of(m, "kvbench.DequantizeGroup", "zero_point_after_scale");
  CHECK(miss.detected_by.empty());
  CHECK(miss.nearest_miss == "tiny");
  CHECK(miss.nearest_miss_over_tolerance == doctest::Approx(by_hand / 1e5));
  CHECK(fault_table(m).find("UNDETECTED: applies to 1 cases, nearest miss") != std::string::npos);
}

TEST_CASE("fault coverage: the same report on 1 and 3 reference threads (a case's faults run side by side)") {
  const auto doc = nlohmann::json::parse(R"({"op": "pmx.KeyValueCache", "name": "kvc", "seed": 3,
    "attributes": {"num_layer": 1, "layer_idx": 0, "quant_bit": 4, "quant_group": 4, "num_repeat": 2},
    "shapes": {"batch": 2, "seqlen": 3, "num_heads": 2, "head_dim": 16, "max_seqlen": 8},
    "inputs": {"start_pos": 2}, "dtypes": {"current_key": "f32"}})");
  const nlohmann::json one = fault_json(compute_fault_coverage(suite_of(doc, {.reference_threads = 1})));
  const nlohmann::json three = fault_json(compute_fault_coverage(suite_of(doc, {.reference_threads = 3})));
  // Every KeyValueCache fault but quant_scale_f32 applies (T1 f32 computes the scale in f32).
  CHECK(one["cases"][0]["faults"].size() == 5);
  CHECK(!one["cases"][0]["faults"].contains("quant_scale_f32"));
  CHECK(one == three);
  CHECK(one["undetected"] == 1);
}

TEST_CASE("fault catalogue: at least 40 faults over the 11 operators, names unique, each described") {
  size_t total = 0;
  for (const Operator* op : operators()) {
    const auto& faults = op->signature().faults;
    CHECK_MESSAGE(!faults.empty(), op->id());
    std::set<std::string> names;
    for (const Fault& f : faults) {
      CHECK_MESSAGE(names.insert(f.name).second, op->id() << " lists " << f.name << " twice");
      CHECK_MESSAGE(!f.bug.empty(), f.name);
    }
    total += faults.size();
    CHECK(op->signature().to_json()["faults"].size() == faults.size());  // `kvbench ops --json` lists them
  }
  CHECK(operators().size() == 11);
  CHECK(total >= 40);
  // The shared attention faults reach attend() under the names the operators list.
  for (const char* name : {"softmax_no_max_subtraction", "softmax_sum_f16", "pv_accumulate_f16"})
    CHECK(attention_fault(name) != AttentionFault::none);
}
