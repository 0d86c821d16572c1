// dnnl.SDPACompressedKV: a hand-derived case through the reference, fully masked rows, and
// the accuracy attribution ordering int8 before int4.
#include <doctest/doctest.h>

#include <cmath>

#include "case_helpers.hpp"
#include "cases/case_loader.hpp"
#include "ops/operator.hpp"

using namespace kvbench;

namespace {

double quant_err_rel_l2(const std::vector<Expected>& golden) {
  const std::string f = golden.at(0).figures.at(0).second;  // "max_abs X, rel_l2 Y"
  return std::stod(f.substr(f.find("rel_l2 ") + 7));
}

}  // namespace

TEST_CASE("SDPA, hand-derived: two keys dequantized as (q - zp) * scale, softmax, values") {
  auto op = instantiate(nlohmann::json::parse(R"({
    "op": "dnnl.SDPACompressedKV", "name": "tiny", "seed": 1,
    "attributes": {"group_size": 8, "k_zero_point": true, "v_zero_point": true, "scale": 1.0},
    "shapes": {"N": 1, "H": 1, "S_q": 1, "S_kv": 2, "D": 8},
    "dtypes": {"query": "f32", "key": "i8", "value": "i8", "zp_k": "i8", "zp_v": "i8"}})"));
  TensorSet ts = op->make_tensors();
  Tensor& q = ts.at("query");
  Tensor& k = ts.at("key");
  Tensor& v = ts.at("value");
  for (size_t i = 0; i < 8; ++i) q.set(i, i == 0 ? 1.0 : 0.0);
  // K: one group per key, scale 0.125 and zero point 2: codes 10 and -6 give K[.,0] = 1 and -1.
  for (int s = 0; s < 2; ++s) {
    ts.at("scale_k").set(s, 0.125);
    ts.at("zp_k").set(s, 2);
    ts.at("scale_v").set(s, 0.5);
    ts.at("zp_v").set(s, 2);
    for (int d = 0; d < 8; ++d) {
      k.set(s * 8 + d, d == 0 ? (s == 0 ? 10 : -6) : 2);
      // V: (code - 2) * 0.5: key 0 -> (1, -1, -1, ...), key 1 -> (-1, 1, -1, ...).
      v.set(s * 8 + d, (d == s) ? 4 : 0);
    }
  }
  const auto out = op->reference(ts);
  // scores (1, -1): P = (e / (e + 1/e), (1/e) / (e + 1/e)); O[0] = P0 - P1 = tanh(1), O[1] = -tanh(1), O[d>1]
  // = -1.
  CHECK(out[0].value().get(0) == doctest::Approx(std::tanh(1.0)).epsilon(1e-6));
  CHECK(out[0].value().get(1) == doctest::Approx(-std::tanh(1.0)).epsilon(1e-6));
  for (int d = 2; d < 8; ++d) CHECK(out[0].value().get(d) == doctest::Approx(-1.0).epsilon(1e-6));
}

TEST_CASE("SDPA: a fully masked row gives zeros, never NaN") {
  auto op = instantiate(nlohmann::json::parse(R"({
    "op": "dnnl.SDPACompressedKV", "name": "masked", "seed": 2,
    "attributes": {"group_size": 16, "mask": "1,1,Sq,Skv"},
    "shapes": {"N": 1, "H": 2, "S_q": 3, "S_kv": 5, "D": 16, "masked_rows": 1},
    "dtypes": {"query": "f16", "key": "s4", "value": "s4"}})"));
  const auto out = op->reference(op->make_tensors());
  for (int h = 0; h < 2; ++h)
    for (int d = 0; d < 16; ++d)
      CHECK(out[0].value().get((h * 3 + 2) * 16 + d) == 0.0);  // row 2 of each head
}

TEST_CASE("SDPA accuracy attribution: int8 loses less than int4, a smaller group less than a larger one") {
  auto make = [](const char* type, int group) {
    auto doc = nlohmann::json::parse(R"({
      "op": "dnnl.SDPACompressedKV", "name": "attr", "seed": 3,
      "attributes": {"group_size": 32, "k_zero_point": true, "v_zero_point": true},
      "shapes": {"N": 1, "H": 4, "S_q": 2, "S_kv": 64, "D": 64}, "dtypes": {"query": "f32"}})");
    doc["attributes"]["group_size"] = group;
    doc["dtypes"]["key"] = doc["dtypes"]["value"] = doc["dtypes"]["zp_k"] = doc["dtypes"]["zp_v"] = type;
    auto op = instantiate(doc);
    return quant_err_rel_l2(op->reference(op->make_tensors()));
  };
  const double i8_16 = make("i8", 16), i8_64 = make("i8", 64), s4_16 = make("s4", 16), s4_64 = make("s4", 64);
  CHECK(i8_16 < s4_16);
  CHECK(i8_64 < s4_64);
  CHECK(s4_16 < s4_64);
  CHECK(i8_16 > 0);
}
