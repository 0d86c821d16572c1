// aclnn.FusedInferAttentionScoreV3: the visible-key predicate of each sparse mode and the
// layout index maps, derived by hand; a hand-derived case through the reference (scale,
// then pse, then the causal mask; softmaxLse); padding rows; rejected case files.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "case_helpers.hpp"
#include "check/compare.hpp"
#include "cases/case_loader.hpp"
#include "core/error.hpp"
#include "ops/fused_infer_attention/fia_params.hpp"
#include "ops/operator.hpp"
#include "core/float_format.hpp"

using namespace kvbench;

namespace {

// Row i of the band as a string of visible (1) and hidden (0) keys j = 0..S2b-1.
std::string row_of(const Band& b, int64_t i, int64_t S2b) {
  std::string s;
  for (int64_t j = 0; j < S2b; ++j) s += (j - i >= b.lo && j - i <= b.hi) ? '1' : '0';
  return s;
}

std::string rows_of(const Band& b, int64_t S1b, int64_t S2b) {
  std::string s;
  for (int64_t i = 0; i < S1b; ++i) s += (i ? "|" : "") + row_of(b, i, S2b);
  return s;
}

constexpr int64_t kMax = 2147483647;

std::string fia(const std::string& attributes,
                const std::string& shapes = R"("B": 1, "S1": 4, "S2": 6, "D": 16)",
                const std::string& extra = "") {
  return R"({"op": "aclnn.FusedInferAttentionScoreV3", "name": "t", "seed": 1, "attributes": {"numHeads": 2)" +
         (attributes.empty() ? "" : ", " + attributes) + R"(}, "shapes": {)" + shapes + "}" + extra + "}";
}

}  // namespace

TEST_CASE("FIA sparse modes: visible keys of S1b = 3 rows over S2b = 5 keys (right-down offset 2)") {
  // Mode 0 without a mask and mode 1 ignore preTokens/nextTokens: every key.
  CHECK(rows_of(fia_band(0, 0, 0, false, false, 3, 5), 3, 5) == "11111|11111|11111");
  CHECK(rows_of(fia_band(1, 0, 0, true, false, 3, 5), 3, 5) == "11111|11111|11111");
  // Mode 0 with a mask: the band -pre <= j - i <= next from the top-left corner.
  CHECK(rows_of(fia_band(0, 1, 0, true, false, 3, 5), 3, 5) == "10000|11000|01100");
  CHECK(rows_of(fia_band(0, 0, 2, true, false, 3, 5), 3, 5) == "11100|01110|00111");
  CHECK(rows_of(fia_band(0, 3, -1, true, false, 3, 5), 3, 5) ==
        "00000|10000|11000");  // a negative next empties row 0
  // Mode 2, left-up causal: j <= i.
  CHECK(rows_of(fia_band(2, kMax, kMax, true, false, 3, 5), 3, 5) == "10000|11000|11100");
  // Mode 3, right-down causal: j <= i + 2.
  CHECK(rows_of(fia_band(3, kMax, kMax, true, false, 3, 5), 3, 5) == "11100|11110|11111");
  // Mode 4, the band from the bottom-right corner: 2 - pre <= j - i <= 2 + next.
  CHECK(rows_of(fia_band(4, 1, 0, true, false, 3, 5), 3, 5) == "01100|00110|00011");
  CHECK(rows_of(fia_band(4, 0, -1, true, false, 3, 5), 3, 5) ==
        "00000|00000|00000");  // pre + next < 0: rejected in parsing
  CHECK(rows_of(fia_band(4, kMax, kMax, true, false, 3, 5), 3, 5) == "11111|11111|11111");
  // More query rows than keys in mode 3: the first rows see nothing (out 0, lse +inf).
  CHECK(rows_of(fia_band(3, kMax, kMax, true, false, 5, 3), 5, 3) == "000|000|100|110|111");
  // Q_S = 1 (IFA) ignores the sparse mode and the band.
  CHECK(rows_of(fia_band(3, 0, 0, true, true, 1, 5), 1, 5) == "11111");
  CHECK(rows_of(fia_band(4, 1, -1, true, true, 1, 5), 1, 5) == "11111");
}

TEST_CASE("FIA layout index maps: query strides and output vectors per layout") {
  FiaParams p;
  p.B = 2;
  p.S1 = 3;
  p.N = 4;
  p.D = 8;
  p.Dv = 8;
  p.q_start = {0, 0};
  p.in = FiaOrder::BSND;
  CHECK(p.query_strides().at(1, 2, 3, 5) == ((1 * 3 + 2) * 4 + 3) * 8 + 5);
  p.in = FiaOrder::BNSD;
  CHECK(p.query_strides().at(1, 2, 3, 5) == ((1 * 4 + 3) * 3 + 2) * 8 + 5);
  p.out = FiaOrder::BSND;
  CHECK(p.out_vector(1, 2, 3) == (1 * 3 + 2) * 4 + 3);
  p.out = FiaOrder::BNSD;
  CHECK(p.out_vector(1, 2, 3) == (1 * 4 + 3) * 3 + 2);
  p.out = FiaOrder::NBSD;  // (N, B, S1, Dv)
  CHECK(p.out_vector(1, 2, 3) == (3 * 2 + 1) * 3 + 2);
  CHECK(p.lse_index(1, 2, 3) == (1 * 4 + 3) * 3 + 2);  // [B, N, S1, 1]
  // TND: T = 7 tokens, batch 1 starts at token 3.
  p.tnd = true;
  p.S1 = 7;
  p.q_start = {0, 3};
  p.in = FiaOrder::TND;
  CHECK(p.query_strides().at(1, 3 + 2, 3, 5) == ((3 + 2) * 4 + 3) * 8 + 5);
  p.in = FiaOrder::NTD;
  CHECK(p.query_strides().at(1, 3 + 2, 3, 5) == (3 * 7 + 3 + 2) * 8 + 5);
  p.out = FiaOrder::TND;
  CHECK(p.out_vector(1, 2, 3) == (3 + 2) * 4 + 3);
  p.out = FiaOrder::NTD;
  CHECK(p.out_vector(1, 2, 3) == 3 * 7 + 3 + 2);
  CHECK(p.lse_index(1, 2, 3) == (3 + 2) * 4 + 3);  // [T, N, 1]
}

TEST_CASE("FIA, hand-derived: scale, then pse, then the causal mask; softmaxLse") {
  auto op = instantiate(nlohmann::json::parse(R"({
    "op": "aclnn.FusedInferAttentionScoreV3", "name": "tiny", "seed": 1,
    "attributes": {"numHeads": 1, "scaleValue": 0.5, "inputLayout": "BSND", "sparseMode": 2,
                   "attenMask_shape": "2048,2048", "pseShift_shape": "1,N,S1,S2", "softmaxLseFlag": true},
    "shapes": {"B": 1, "S1": 2, "S2": 2, "D": 8},
    "dtypes": {"query": "f32"}})"));
  TensorSet ts = op->make_tensors();
  for (size_t i = 0; i < 16; ++i) {
    const size_t d = i % 8;
    ts.at("query").set(i, d == 0 ? 1.0 : 0.0);                     // both rows e0
    ts.at("key").set(i, d == 0 ? (i < 8 ? 1.0 : -1.0) : 0.0);      // k0 = e0, k1 = -e0
    ts.at("value").set(i, i < 8 ? static_cast<double>(d) : 10.0);  // v0 = (0..7), v1 = 10
  }
  for (size_t i = 0; i < 4; ++i) ts.at("pseShift").set(i, i == 3 ? 1.0 : 0.0);  // pse[1][1] = 1
  const auto e = op->reference(ts);
  // Row 0 sees key 0 only: out = v0, lse = 0.5 * 1. Row 1: s = (0.5 * 1, 0.5 * -1 + 1) =
  // (0.5, 0.5): out = (v0 + v1) / 2, lse = 0.5 + log 2. (pse before the scale would give
  // (0.5, 0) instead.)
  for (int d = 0; d < 8; ++d) {
    CHECK(e[0].value().get(d) == d);
    CHECK(e[0].value().get(8 + d) == doctest::Approx((d + 10.0) / 2).epsilon(1e-7));
  }
  CHECK(e[1].tensor == "softmaxLse");
  CHECK(e[1].value().get(0) == 0.5);
  CHECK(e[1].value().get(1) == doctest::Approx(0.5 + std::log(2.0)).epsilon(1e-7));
}

TEST_CASE("FIA: rows past actualSeqLengths, rows outside the band, fully masked rows: 0 and lse +inf") {
  auto op = instantiate(nlohmann::json::parse(R"({
    "op": "aclnn.FusedInferAttentionScoreV3", "name": "rows", "seed": 5,
    "attributes": {"numHeads": 1, "scaleValue": 0.25, "inputLayout": "BNSD", "sparseMode": 0, "innerPrecise": 2,
                   "attenMask_shape": "S1,S2", "preTokens": 8, "nextTokens": -1, "softmaxLseFlag": true},
    "shapes": {"B": 1, "S1": 6, "S2": 8, "D": 8, "masked_rows": 1},
    "inputs": {"actualSeqLengths": [5]}})"));
  const auto e = op->reference(op->make_tensors());
  auto row_zero = [&](int i) {
    for (int d = 0; d < 8; ++d)
      if (e[0].value().get(i * 8 + d) != 0.0) return false;
    return e[1].value().get(i) == kInf;
  };
  CHECK(row_zero(0));  // nextTokens -1: row 0 has no key in the band
  CHECK(!row_zero(1));
  CHECK(!row_zero(3));
  CHECK(row_zero(4));  // masked_rows: the last row of the batch is all masked (innerPrecise 2)
  CHECK(row_zero(5));  // past actualSeqLengths
  for (int d = 0; d < 8; ++d) CHECK(!std::signbit(e[0].value().get(40 + d)));  // +0.0
}

TEST_CASE("FIA decode: a batch without keys has lse +inf, and the IFA kernel's -3.4e38 is accepted") {
  auto op = instantiate(nlohmann::json::parse(R"({
    "op": "aclnn.FusedInferAttentionScoreV3", "name": "empty", "seed": 5,
    "attributes": {"numHeads": 2, "inputLayout": "BNSD", "softmaxLseFlag": true},
    "shapes": {"B": 2, "S1": 1, "S2": 8, "D": 8},
    "inputs": {"actualSeqLengthsKv": [0, 8]}})"));
  const TensorSet in = op->make_tensors();
  const auto e = op->golden(in);
  const Expected& lse = e[1];
  REQUIRE(lse.tensor == "softmaxLse");
  // [B, N, S1, 1]: batch 0's two heads have no key, batch 1's have eight.
  CHECK(lse.value().get(0) == kInf);
  CHECK(lse.value().get(1) == kInf);
  CHECK(std::isfinite(lse.value().get(2)));
  REQUIRE(lse.has_alternate(0));
  CHECK(lse.alternate_at(1) == static_cast<double>(-3.4e38f));
  CHECK(!lse.has_alternate(2));
  // A device that writes the IFA sentinel passes (counted at the boundary); one that writes
  // any other finite value there fails.
  Tensor actual("softmaxLse", DType::f32, in.at("softmaxLse").shape(), Role::output);
  for (size_t i = 0; i < 4; ++i) actual.set(i, lse.value().get(i));
  actual.set(0, -3.4e38f);
  actual.set(1, -3.4e38f);
  const Metrics ok = compare_output(lse, actual, in.at("softmaxLse"));
  CHECK(ok.violations == 0);
  CHECK(ok.boundary == 2);
  actual.set(1, -1e30f);
  CHECK(compare_output(lse, actual, in.at("softmaxLse")).violations == 1);
}

TEST_CASE("FIA: a case file that breaks a constraint is rejected, naming the field") {
  CHECK(rejection(fia(R"("numKeyValueHeads": 3)")).find("/attributes/numKeyValueHeads") == 0);
  CHECK(rejection(fia(R"("sparseMode": 5)")).find("/attributes/sparseMode: sparseMode 5-8") == 0);
  CHECK(rejection(fia(R"("sparseMode": 3)"))
            .find("/attributes/attenMask_shape: sparseMode 3 takes the compressed") == 0);
  CHECK(rejection(fia(R"("sparseMode": 1)"))
            .find("/attributes/attenMask_shape: sparseMode 1 (allMask) needs") == 0);
  CHECK(rejection(fia(R"("attenMask_shape": "S1,S2", "preTokens": -2, "nextTokens": 1)"))
            .find("/attributes/nextTokens") == 0);
  CHECK(rejection(fia(R"("attenMask_shape": "S1,S2", "preTokens": 5, "nextTokens": -4)"))
            .find("/attributes/nextTokens: a negative nextTokens must be above -S1b") == 0);
  CHECK(rejection(fia(R"("attenMask_shape": "S1,S2", "preTokens": 4, "nextTokens": -3)")) == "");
  CHECK(rejection(fia(R"("attenMask_shape": "B,S2")")).find("/attributes/attenMask_shape") ==
        0);  // an IFA shape with S1 = 4
  CHECK(rejection(
            fia(R"("attenMask_shape": "S1,S2")", R"("B": 1, "S1": 4, "S2": 6, "D": 16, "masked_rows": 1)"))
            .find("/shapes/masked_rows: a row whose every key is masked is undocumented") == 0);
  CHECK(rejection(fia(R"("blockSize": 16, "kv_cache_layout": "BnNBsD")",
                      R"("B": 1, "S1": 4, "S2": 6, "D": 16)", R"(, "inputs": {"actualSeqLengthsKv": [6]})"))
            .find("/attributes/kv_cache_layout: the BnNBsD cache takes BNSD or TND") == 0);
  CHECK(rejection(fia(R"("blockSize": 16)"))
            .find("/attributes/blockSize: page attention needs actualSeqLengthsKv") == 0);
  CHECK(rejection(fia(R"("kv_cache_layout": "BnBsH")")).find("/attributes/kv_cache_layout") == 0);
  CHECK(rejection(fia(R"("inputLayout": "TND")", R"("B": 2, "D": 16)",
                      R"(, "inputs": {"actualSeqLengths": [2, 4], "actualSeqLengthsKv": [3, 6]})"))
            .find("/shapes/B: B comes from the actual lengths") == 0);
  CHECK(rejection(fia(R"("inputLayout": "TND")", R"("D": 16)",
                      R"(, "inputs": {"actualSeqLengths": [2, 1], "actualSeqLengthsKv": [3, 6]})"))
            .find("/inputs/actualSeqLengths/1: cumulative ends must not decrease") == 0);
  CHECK(
      rejection(fia("", R"("B": 2, "S1": 4, "S2": 6, "D": 16)", R"(, "inputs": {"actualSeqLengthsKv": [7]})"))
          .find("/inputs/actualSeqLengthsKv/0: a length above S2") == 0);
  CHECK(rejection(fia(R"("ascend_limits": true)", R"("B": 1, "S1": 4, "S2": 6, "D": 16)",
                      R"(, "dtypes": {"query": "f32"})"))
            .find("/attributes/ascend_limits: ascend_limits: the device takes f16 or bf16") == 0);
  CHECK(rejection(fia(R"("ascend_limits": true)")) == "");
  CHECK(rejection(fia(R"("ascend_limits": true)", R"("B": 1, "S1": 4, "S2": 6, "D": 16, "Dv": 8)"))
            .find("/shapes/Dv: ascend_limits") == 0);
  CHECK(rejection(fia(R"("is_causal": true)")).find("/attributes/is_causal") ==
        0);  // unknown keys stay unknown
}

TEST_CASE("FIA antiquant, hand-derived: x = (code + offset) * scale, per-token scales by key") {
  auto op = instantiate(nlohmann::json::parse(R"({
    "op": "aclnn.FusedInferAttentionScoreV3", "name": "aq", "seed": 1,
    "attributes": {"numHeads": 1, "scaleValue": 1.0, "inputLayout": "BNSD", "keyAntiquantMode": 1,
                   "antiquant_offset": true, "softmaxLseFlag": true},
    "shapes": {"B": 1, "S1": 1, "S2": 2, "D": 8},
    "dtypes": {"query": "f32", "key": "s4"}})"));
  TensorSet ts = op->make_tensors();
  CHECK(ts.at("key").dtype() == DType::s4);
  CHECK(ts.at("value").dtype() == DType::s4);
  CHECK(ts.at("keyAntiquantScale").shape() == Shape{1, 1, 2});  // per-token with Q_S = 1: (1, B, S)
  CHECK(ts.at("keyAntiquantScale").dtype() == DType::f32);
  for (size_t i = 0; i < 8; ++i) ts.at("query").set(i, i == 0 ? 1.0 : 0.0);
  // Key 0: code 3, offset 1, scale 0.5 -> 2; key 1: code -2, offset 1, scale 0.25 -> -0.25.
  // Value: codes d - 4 with offset 0 and scale 1 (key 0), 2 (key 1).
  const double kscale[2] = {0.5, 0.25}, vscale[2] = {1.0, 2.0};
  for (int t = 0; t < 2; ++t) {
    ts.at("keyAntiquantScale").set(t, kscale[t]);
    ts.at("keyAntiquantOffset").set(t, 1.0);
    ts.at("valueAntiquantScale").set(t, vscale[t]);
    ts.at("valueAntiquantOffset").set(t, 0.0);
    for (int d = 0; d < 8; ++d) {
      ts.at("key").set(t * 8 + d, d == 0 ? (t == 0 ? 3 : -2) : 0);
      ts.at("value").set(t * 8 + d, d - 4);
    }
  }
  const auto e = op->reference(ts);
  // Scores 2 and -0.25: P = (1, e^-2.25) / (1 + e^-2.25); lse = 2 + log(1 + e^-2.25).
  const double p1 = std::exp(-2.25) / (1 + std::exp(-2.25));
  for (int d = 0; d < 8; ++d)
    CHECK(e[0].value().get(d) == doctest::Approx((1 - p1) * (d - 4) + p1 * 2 * (d - 4)).epsilon(1e-6));
  CHECK(e[1].value().get(0) == doctest::Approx(2 + std::log1p(std::exp(-2.25))).epsilon(1e-7));
  // The accuracy attribution comes with the output it measures; nothing is left in the case.
  CHECK(e[0].figures.at(0).first == "quant_err");
  CHECK(op->figures().empty());
  op->skip_figures();
  CHECK(op->reference(ts)[0].figures.empty());
}

TEST_CASE("FIA antiquant: the document's mode combinations, and the rest rejected") {
  const std::string decode = R"("B": 1, "S1": 1, "S2": 6, "D": 16)", i8 = R"(, "dtypes": {"key": "i8"})",
                    s4 = R"(, "dtypes": {"key": "s4"})";
  CHECK(rejection(fia(R"("keyAntiquantMode": 0, "valueAntiquantMode": 1)", decode, i8)) == "");
  CHECK(rejection(fia(R"("keyAntiquantMode": 1, "valueAntiquantMode": 0)", decode, i8))
            .find("/attributes/valueAntiquantMode") == 0);
  CHECK(rejection(fia(R"("keyAntiquantMode": 2)", R"("B": 1, "S1": 4, "S2": 6, "D": 16)", i8))
            .find("/attributes/keyAntiquantMode: with Q_S > 1 only modes 0 and 1") == 0);
  CHECK(rejection(fia(R"("keyAntiquantMode": 4)", decode, i8))
            .find("/attributes/keyAntiquantMode: modes 4 and 5") == 0);
  CHECK(rejection(fia(R"("keyAntiquantMode": 2)", decode, s4))
            .find("/attributes/keyAntiquantMode: int4 KV takes") == 0);
  CHECK(rejection(fia(R"("antiquant_per_tensor": true)", decode, s4))
            .find("/attributes/antiquant_per_tensor") == 0);
  CHECK(rejection(fia(R"("keyAntiquantMode": 1)", decode))
            .find("/attributes/keyAntiquantMode: keyAntiquantMode needs int8/int4") == 0);
  CHECK(rejection(fia("", decode, R"(, "dtypes": {"key": "i8", "value": "s4"})")).find("/dtypes/value") == 0);
}

TEST_CASE(
    "FIA left padding: batch rows [S1 - pad - len, S1 - pad) are computed, the others 0 with lse +inf") {
  auto op = instantiate(nlohmann::json::parse(R"({
    "op": "aclnn.FusedInferAttentionScoreV3", "name": "lp", "seed": 3,
    "attributes": {"numHeads": 1, "scaleValue": 0.25, "inputLayout": "BNSD", "softmaxLseFlag": true},
    "shapes": {"B": 1, "S1": 5, "S2": 6, "D": 8},
    "inputs": {"actualSeqLengths": [2], "queryPaddingSize": 1, "actualSeqLengthsKv": [3], "kvPaddingSize": -4}})"));
  const auto e = op->reference(op->make_tensors());
  // Rows 2 and 3 (5 - 1 - 2 = 2); keys [3, 6) (a negative kvPaddingSize counts as 0).
  for (int row = 0; row < 5; ++row) CHECK((e[1].value().get(row) == kInf) == (row != 2 && row != 3));
  const std::string decode = R"("B": 1, "S1": 1, "S2": 6, "D": 16)";
  CHECK(rejection(fia("", decode, R"(, "inputs": {"actualSeqLengths": [1], "queryPaddingSize": 0})"))
            .find("/inputs/queryPaddingSize: queryPaddingSize needs Q_S > 1") == 0);
  CHECK(rejection(fia("", R"("B": 1, "S1": 4, "S2": 6, "D": 16)", R"(, "inputs": {"queryPaddingSize": 0})"))
            .find("/inputs/queryPaddingSize: queryPaddingSize needs actualSeqLengths") == 0);
  CHECK(rejection(fia("", R"("B": 1, "S1": 4, "S2": 6, "D": 16)",
                      R"(, "inputs": {"actualSeqLengths": [4], "queryPaddingSize": 1})"))
            .find("/inputs/queryPaddingSize: batch 0 starts before row 0") == 0);
  CHECK(rejection(fia(R"("sparseMode": 3, "attenMask_shape": "2048,2048")",
                      R"("B": 1, "S1": 4, "S2": 6, "D": 16)",
                      R"(, "inputs": {"actualSeqLengthsKv": [3], "kvPaddingSize": 1})"))
            .find("/attributes/sparseMode: left padding with sparseMode 2-4") == 0);
  CHECK(rejection(fia(R"("blockSize": 16)", decode,
                      R"(, "inputs": {"actualSeqLengthsKv": [3], "kvPaddingSize": 1})"))
            .find("/inputs/kvPaddingSize: left padding takes no page attention") == 0);
  // Q_S = 1: a kv start before 0 is accepted and gives 0 (the document).
  CHECK(rejection(fia("", decode, R"(, "inputs": {"actualSeqLengthsKv": [6], "kvPaddingSize": 2})")) == "");
}

TEST_CASE(
    "FIA post-quant: a tie rounds to even; only a tie the double reference alone sees accepts the other "
    "neighbour") {
  // S2 1: attentionOut = v exactly on any device (P = 1), a tie exact in every precision:
  // the tie rule alone. S2 2: equal value rows, a tie only where P sums to 1 exactly.
  for (const int keys : {1, 2}) {
    auto op = instantiate(nlohmann::json::parse(R"({
      "op": "aclnn.FusedInferAttentionScoreV3", "name": "pq", "seed": 1,
      "attributes": {"numHeads": 1, "inputLayout": "BSND", "postquant_ties": true},
      "shapes": {"B": 1, "S1": 1, "S2": )" + std::to_string(keys) +
                                                R"(, "D": 8},
      "dtypes": {"attentionOut": "i8"}})"));
    const auto e = op->reference(op->make_tensors());
    // attentionOut = v, v[d] = (d - 8) / 8, times quantScale2 4: -4, -3.5, ..., -0.5.
    for (int d = 0; d < 8; ++d) {
      const double v = (d - 8) / 2.0;
      CHECK(e[0].exact()[d] == doctest::Approx(v).epsilon(1e-15));
      if (d % 2 == 0) {
        CHECK(e[0].value().get(d) == v);
        CHECK(std::isnan(e[0].alternate_at(d)));
      } else {
        CHECK(e[0].value().get(d) == std::nearbyint(v));  // ties to even
        if (keys == 1)
          CHECK(std::isnan(e[0].alternate_at(d)));
        else
          CHECK(e[0].value().get(d) + e[0].alternate_at(d) == 2 * v);  // the other side of the tie
      }
    }
  }
  CHECK(rejection(fia(R"("postquant_offset": true, "sparseMode": 3, "attenMask_shape": "2048,2048")",
                      R"("B": 1, "S1": 8, "S2": 6, "D": 16)", R"(, "dtypes": {"attentionOut": "i8"})"))
            .find("/attributes/postquant_offset: quantOffset2 with rows the operator does not compute") == 0);
  CHECK(rejection(fia(R"("postquant_offset": true)"))
            .find("/attributes/postquant_offset: postquant_offset needs an int8 output") == 0);
}

TEST_CASE("FIA shared prefix: keys are prefix[:Lp] then the batch's own; the document's exclusions") {
  auto op = instantiate(nlohmann::json::parse(R"({
    "op": "aclnn.FusedInferAttentionScoreV3", "name": "sp", "seed": 1,
    "attributes": {"numHeads": 1, "scaleValue": 1.0, "inputLayout": "BSND", "softmaxLseFlag": true},
    "shapes": {"B": 1, "S1": 1, "S2": 1, "D": 8, "S_prefix": 2},
    "inputs": {"actualSharedPrefixLen": 1},
    "dtypes": {"query": "f32"}})"));
  TensorSet ts = op->make_tensors();
  CHECK(ts.at("keySharedPrefix").shape() == Shape{1, 2, 1, 8});
  for (size_t i = 0; i < 8; ++i) {
    ts.at("query").set(i, i == 0 ? 1.0 : 0.0);
    ts.at("key").set(i, i == 0 ? 1.0 : 0.0);  // own key: score 1
    ts.at("value").set(i, 3.0);
    for (size_t t = 0; t < 2; ++t) {
      ts.at("keySharedPrefix")
          .set(t * 8 + i, i == 0 ? (t == 0 ? 1.0 : 50.0) : 0.0);  // prefix 0: score 1; prefix 1 (past Lp): 50
      ts.at("valueSharedPrefix").set(t * 8 + i, t == 0 ? 1.0 : 100.0);
    }
  }
  const auto e = op->reference(ts);
  // Equal scores over prefix key 0 and the own key: out = (1 + 3) / 2, lse = 1 + log 2.
  for (int d = 0; d < 8; ++d) CHECK(e[0].value().get(d) == doctest::Approx(2.0).epsilon(1e-7));
  CHECK(e[1].value().get(0) == doctest::Approx(1 + std::log(2.0)).epsilon(1e-7));
  CHECK(rejection(fia("", R"("B": 1, "S1": 4, "S2": 6, "D": 16, "S_prefix": 3)",
                      R"(, "inputs": {"actualSharedPrefixLen": 4})"))
            .find("/inputs/actualSharedPrefixLen: actualSharedPrefixLen must not exceed") == 0);
  CHECK(rejection(fia(R"("blockSize": 16)", R"("B": 1, "S1": 4, "S2": 6, "D": 16, "S_prefix": 3)",
                      R"(, "inputs": {"actualSeqLengthsKv": [6]})"))
            .find("/shapes/S_prefix: a shared prefix takes no page attention") == 0);
  CHECK(rejection(
            fia("", R"("B": 1, "S1": 4, "S2": 6, "D": 16)", R"(, "inputs": {"actualSharedPrefixLen": 1})"))
            .find("/inputs/actualSharedPrefixLen: actualSharedPrefixLen needs a shared prefix") == 0);
}

TEST_CASE("FIA MLA: queryRope . keyRope joins the contraction; the document's exclusions") {
  auto op = instantiate(nlohmann::json::parse(R"({
    "op": "aclnn.FusedInferAttentionScoreV3", "name": "mla", "seed": 1,
    "attributes": {"numHeads": 1, "scaleValue": 1.0, "inputLayout": "BNSD", "softmaxLseFlag": true},
    "shapes": {"B": 1, "S1": 1, "S2": 2, "D": 8, "rope": 64},
    "dtypes": {"query": "f32"}})"));
  TensorSet ts = op->make_tensors();
  CHECK(ts.at("queryRope").shape() == Shape{1, 1, 1, 64});
  CHECK(ts.at("keyRope").shape() == Shape{1, 1, 2, 64});
  for (size_t i = 0; i < 8; ++i) ts.at("query").set(i, i == 0 ? 1.0 : 0.0);
  for (size_t i = 0; i < 64; ++i) ts.at("queryRope").set(i, i == 0 ? 1.0 : 0.0);
  for (size_t t = 0; t < 2; ++t) {
    for (size_t i = 0; i < 8; ++i) {
      ts.at("key").set(t * 8 + i, t == 0 && i == 0 ? 1.0 : 0.0);  // key 0: q.k = 1
      ts.at("value").set(t * 8 + i, t == 0 ? 1.0 : 5.0);
    }
    for (size_t i = 0; i < 64; ++i)
      ts.at("keyRope").set(t * 64 + i, t == 1 && i == 0 ? 1.0 : 0.0);  // key 1: qr.kr = 1
  }
  const auto e = op->reference(ts);
  for (int d = 0; d < 8; ++d)
    CHECK(e[0].value().get(d) == doctest::Approx(3.0).epsilon(1e-7));  // equal scores: (1 + 5) / 2
  CHECK(e[1].value().get(0) == doctest::Approx(1 + std::log(2.0)).epsilon(1e-7));
  CHECK(rejection(fia(R"("pseShift_shape": "B,N,S1,S2")", R"("B": 1, "S1": 4, "S2": 6, "D": 16, "rope": 64)"))
            .find("/shapes/rope: MLA with pseShift is rejected") == 0);
  CHECK(rejection(fia("", R"("B": 1, "S1": 4, "S2": 6, "D": 16, "rope": 32)")).find("/shapes/rope") == 0);
}

TEST_CASE("FIA combined antiquant parameters: int8 with an f16 query, one antiquantMode for both") {
  const std::string decode = R"("B": 1, "S1": 1, "S2": 6, "D": 16)";
  CHECK(rejection(fia(R"("antiquant_combined": true, "antiquantMode": 1)", decode,
                      R"(, "dtypes": {"key": "i8"})")) == "");
  CHECK(rejection(fia(R"("antiquant_combined": true)", decode, R"(, "dtypes": {"key": "s4"})"))
            .find("/attributes/antiquant_combined: the combined antiquant parameters take int8 KV only") ==
        0);
  CHECK(
      rejection(fia(R"("antiquant_combined": true)", decode, R"(, "dtypes": {"query": "bf16", "key": "i8"})"))
          .find("/attributes/antiquant_combined: the combined antiquant parameters take an f16 query only") ==
      0);
  CHECK(rejection(fia(R"("antiquant_combined": true, "keyAntiquantMode": 1)", decode,
                      R"(, "dtypes": {"key": "i8"})"))
            .find("/attributes/keyAntiquantMode: keyAntiquantMode belongs to the separate parameters") == 0);
  CHECK(rejection(fia(R"("antiquantMode": 1)", decode, R"(, "dtypes": {"key": "i8"})"))
            .find("/attributes/antiquantMode: antiquantMode belongs to the combined parameters") == 0);
  auto op = instantiate(
      nlohmann::json::parse(fia(R"("antiquant_combined": true, "antiquantMode": 1, "antiquant_offset": true)",
                                decode, R"(, "dtypes": {"key": "i8"})")));
  const TensorSet ts = op->make_tensors();
  CHECK(ts.at("antiquantScale").shape() == Shape{2, 1, 6});  // (2, B, S): [0] key, [1] value
  CHECK(ts.at("antiquantScale").dtype() == DType::f32);
  CHECK(!ts.has("keyAntiquantScale"));
}

TEST_CASE("FIA FLOPs: 2 * (D + rope + Dv) per (row, key, head) inside the band") {
  // S1 = 2, S2 = 3, right-down causal (offset 1): row 0 sees keys 0-1, row 1 keys 0-2: 5
  // pairs; 2 heads; D 8, Dv 16.
  auto op = instantiate(nlohmann::json::parse(R"({
    "op": "aclnn.FusedInferAttentionScoreV3", "name": "fl", "seed": 1,
    "attributes": {"numHeads": 2, "inputLayout": "BNSD", "sparseMode": 3, "attenMask_shape": "2048,2048"},
    "shapes": {"B": 1, "S1": 2, "S2": 3, "D": 8, "Dv": 16}})"));
  CHECK(op->flops() == 5 * 2 * 2.0 * (8 + 16));
  // Padding rows are not computed: actualSeqLengths 1 leaves row 0 only (2 keys).
  auto padded = instantiate(nlohmann::json::parse(R"({
    "op": "aclnn.FusedInferAttentionScoreV3", "name": "fl", "seed": 1,
    "attributes": {"numHeads": 2, "inputLayout": "BNSD", "sparseMode": 3, "attenMask_shape": "2048,2048"},
    "shapes": {"B": 1, "S1": 2, "S2": 3, "D": 8, "Dv": 16}, "inputs": {"actualSeqLengths": [1]}})"));
  CHECK(padded->flops() == 3 * 2 * 2.0 * (8 + 16));  // row 0 of a 1-row batch: offset 2, keys 0-2
}
