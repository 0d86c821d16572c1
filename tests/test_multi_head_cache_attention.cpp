// pmx.dynamic_batching.MultiHeadCacheAttention: hand-derived tiny cases through the
// reference, and the ALiBi slopes.
#include <doctest/doctest.h>

#include <cmath>

#include "case_helpers.hpp"
#include "cases/case_loader.hpp"
#include "ops/operator.hpp"
#include "core/error.hpp"
#include "ref/attention.hpp"

using namespace kvbench;

namespace {

// One batch, one head, head_dim 16, T1 f32, unquantized, offset mode: with one batch the
// sequence starts after cache_gap = 3 unreferenced rows, so token t lives in row 3 + t.
nlohmann::json tiny(int seqlen, int start_pos, bool causal) {
  auto doc = nlohmann::json::parse(R"({
    "op": "pmx.dynamic_batching.MultiHeadCacheAttention", "name": "tiny", "seed": 9,
    "attributes": {"num_heads": 1, "head_dim": 16, "is_causal": false, "quant_bit": 0},
    "inputs": {"seqlens": [1], "start_pos": [1]}, "dtypes": {"query": "f32"}})");
  doc["inputs"]["seqlens"] = {seqlen};
  doc["inputs"]["start_pos"] = {start_pos};
  doc["attributes"]["is_causal"] = causal;
  return doc;
}

// Cache layout 0 with L = 1, Hkv = 1: element (row T, k/v c, d) is at (T * 2 + c) * 16 + d.
size_t at(int64_t T, int c, int d) { return static_cast<size_t>((T * 2 + c) * 16 + d); }

void zero(Tensor& t) {
  for (size_t i = 0; i < t.numel(); ++i) t.set(i, 0.0);
}

}  // namespace

TEST_CASE("MHCA, hand-derived: one decode query over a cached and a new key") {
  auto op = instantiate(tiny(1, 1, true));
  TensorSet ts = op->make_tensors();
  Tensor& q = ts.at("query");
  Tensor& k = ts.at("current_key");
  Tensor& v = ts.at("current_value");
  Tensor& cache = ts.at("cache");
  zero(q);
  zero(k);
  zero(v);
  for (int d = 0; d < 16; ++d) {
    cache.set(at(3, 0, d), 0.0);
    cache.set(at(3, 1, d), 0.0);
  }
  // q = (4, 0, ...); cached key (0.5, ...), new key (-0.5, ...): scores q.k / sqrt(16) = 0.5, -0.5.
  q.set(0, 4.0);
  cache.set(at(3, 0, 0), 0.5);
  k.set(0, -0.5);
  // cached value e0, new value e1: the output is (P0, P1, 0, ...).
  cache.set(at(3, 1, 0), 1.0);
  v.set(1, 1.0);
  const auto out = op->reference(ts);
  const Expected& o = out[0];
  REQUIRE(o.tensor == "attn_output");
  // softmax(0.5, -0.5) = (e / (e + 1), 1 / (e + 1)) = (0.7310585786..., 0.2689414213...).
  const double e = std::exp(1.0);
  CHECK(o.value().get(0) == static_cast<float>(e / (e + 1)));
  CHECK(o.value().get(1) == static_cast<float>(1 / (e + 1)));
  for (int d = 2; d < 16; ++d) CHECK(o.value().get(d) == 0.0);
  // The new key/value went to row 3 + start_pos = 4.
  const Expected& c = out[1];
  CHECK(c.tensor == "cache");
  CHECK(c.value().get(at(4, 0, 0)) == -0.5);
  CHECK(c.value().get(at(4, 1, 1)) == 1.0);
  CHECK(c.is_touched(at(4, 0, 0)));
  CHECK(!c.is_touched(at(3, 0, 0)));
}

TEST_CASE("MHCA, hand-derived: causal prefill row 0 sees only key 0, so it returns V0") {
  auto op = instantiate(tiny(2, 0, true));
  TensorSet ts = op->make_tensors();
  const auto out = op->reference(ts);
  const Tensor& v = ts.at("current_value");
  for (int d = 0; d < 16; ++d) CHECK(out[0].value().get(d) == v.get(d));  // row 0, head 0
  // Without causal masking row 0 also sees key 1, and the output changes.
  auto open = instantiate(tiny(2, 0, false));
  const auto out2 = open->reference(open->make_tensors());
  bool differs = false;
  for (int d = 0; d < 16; ++d) differs = differs || out2[0].value().get(d) != v.get(d);
  CHECK(differs);
}

TEST_CASE("ALiBi slopes: powers of two, and 12 heads as in PMX's ALiBiSlope.py") {
  const auto s8 = alibi_slopes(8);
  for (int k = 0; k < 8; ++k) CHECK(s8[k] == std::ldexp(1.0, -(k + 1)));
  const auto s12 = alibi_slopes(12);
  REQUIRE(s12.size() == 12);
  for (int k = 0; k < 8; ++k) CHECK(s12[k] == std::ldexp(1.0, -(k + 1)));
  CHECK(s12[8] == doctest::Approx(std::pow(2.0, -0.5)).epsilon(1e-15));
  CHECK(s12[9] == doctest::Approx(std::pow(2.0, -1.5)).epsilon(1e-15));
  CHECK(s12[10] == doctest::Approx(std::pow(2.0, -2.5)).epsilon(1e-15));
  CHECK(s12[11] == doctest::Approx(std::pow(2.0, -3.5)).epsilon(1e-15));
}

TEST_CASE("MHCA rejects a decoding batch of more than one token, naming the field") {
  auto doc = tiny(2, 0, true);
  doc["inputs"]["decoding_batches"] = 1;
  auto loaded = expand_case_document(doc, "test.json", {});
  REQUIRE(loaded.cases.size() == 1);
  try {
    instantiate_case(*find_operator(doc["op"]), loaded.cases[0], {});
    FAIL("expected a CaseError");
  } catch (const CaseError& e) {
    CHECK(e.pointer() == "/inputs/seqlens");
  }
}

// A decode's output must depend on its scores by more than the tolerance, or a kernel that
// ignored Q.K would pass. Zeroing the query makes every score 0 (softmax uniform over the
// visible keys): at least half of the output elements must then move out of tolerance, at
// both bit widths. Int4 scales once spanned int8's range, [1/1024, 1/64): values below 0.11,
// outputs near 2e-3, inside atol 1e-3 whatever the scores (a kernel computing scores from
// one element per vector passed mhca_decode_4096[quant_bit=4]).
TEST_CASE("MHCA decode: the output moves out of tolerance when the scores are flattened") {
  for (const int bits : {8, 4}) {
    CAPTURE(bits);
    auto doc = nlohmann::json::parse(R"({
      "op": "pmx.dynamic_batching.MultiHeadCacheAttention", "name": "flat", "seed": 40,
      "attributes": {"num_heads": 8, "head_dim": 128, "is_causal": true, "num_kv_heads": 2,
                     "quant_bit": 8, "quant_group": 8, "cache_mode": 1, "page_size": 128},
      "inputs": {"seqlens": [1, 1], "start_pos": [511, 300], "decoding_batches": 2},
      "dtypes": {"query": "f16", "scale": "f16"}})");
    doc["attributes"]["quant_bit"] = bits;
    auto op = instantiate(doc);
    TensorSet ts = op->make_tensors();
    const Tensor scored = op->reference(ts)[0].value();
    zero(ts.at("query"));
    const Tensor flat = op->reference(ts)[0].value();
    const Tolerance tol = op->default_tolerance("attn_output");
    size_t moved = 0;
    for (size_t i = 0; i < scored.numel(); ++i)
      moved += std::abs(scored.get(i) - flat.get(i)) > tol.atol + tol.rtol * std::abs(scored.get(i));
    CHECK(moved * 2 > scored.numel());
  }
}
