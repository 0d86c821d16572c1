// FusedInferAttentionScoreV3's HIFLOAT8 key/value antiquant (specs/fused_infer_attention_quant.md
// "HIFLOAT8 KV antiquant"): the fast store of generated codes bit for bit hif8_encode's
// (saturating) on every code's value, every midpoint and its neighbours, every f16 value,
// random doubles over HiF8's binades and the specials; and the document's refusals, each
// naming its field.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/float_format.hpp"
#include "core/hifloat8.hpp"
#include "ops/fused_infer_attention/fia_inputs.hpp"
#include "ops/operator.hpp"
#include "cases/case_loader.hpp"
#include "case_helpers.hpp"

using namespace kvbench;

namespace {

// Every input checked: fia_store_hif8_row's code of each against hif8_encode's.
void fia_hif8_check_store(const std::vector<double>& xs) {
  std::vector<uint8_t> codes(xs.size());
  fia_store_hif8_row(xs.data(), static_cast<int64_t>(xs.size()), codes.data());
  size_t bad = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const uint8_t want = hif8_encode(xs[i], Hif8Overflow::saturate);
    if (codes[i] != want && bad++ < 8)
      FAIL_CHECK("x = " << std::hexfloat << xs[i] << ": store " << int(codes[i]) << ", hif8_encode "
                        << int(want));
  }
  CHECK(bad == 0);
}

std::string fia_hif8_case(const std::string& attributes, const std::string& query = "f16",
                          const std::string& shapes = R"("B": 1, "S1": 1, "S2": 64, "D": 32)") {
  const std::string heads = attributes.find("numHeads") == std::string::npos ? R"("numHeads": 2)" : "";
  return R"({"op": "aclnn.FusedInferAttentionScoreV3", "name": "t", "seed": 1, "attributes": {)" + heads +
         (attributes.empty() || heads.empty() ? "" : ", ") + attributes + R"(}, "shapes": {)" + shapes +
         R"(}, "inputs": {"actualSeqLengthsKv": [64]}, "dtypes": {"query": ")" + query +
         R"(", "key": "hifloat8"}})";
}

}  // namespace

TEST_CASE("FIA HiF8: the store of generated codes is hif8_encode (saturating) bit for bit") {
  const std::array<double, 256>& v = hif8_values();
  std::vector<double> finite;
  for (int c = 0; c < 256; ++c)
    if (std::isfinite(v[static_cast<size_t>(c)]) && v[static_cast<size_t>(c)] >= 0)
      finite.push_back(v[static_cast<size_t>(c)]);
  std::sort(finite.begin(), finite.end());
  std::vector<double> xs;
  const auto both = [&](double x) {
    xs.push_back(x);
    xs.push_back(-x);
  };
  for (double x : finite) {
    both(x);
    both(std::nextafter(x, 0.0));
    both(std::nextafter(x, 1e300));
  }
  // Every midpoint (exact in double) and its neighbours, past the largest too (40960, the
  // saturating boundary), and around 2^-23 (the least nonzero input).
  finite.push_back(49152.0);
  for (size_t i = 0; i + 1 < finite.size(); ++i) {
    const double m = (finite[i] + finite[i + 1]) / 2;
    for (double x : {m, std::nextafter(m, 0.0), std::nextafter(m, 1e300)}) both(x);
  }
  for (double x : {0x1p-23, 0x1p-24, 0x1.8p-23, 40960.0, 65536.0, 1e30, 0x1p-1074, 0x1p-1022, 0.0})
    for (double y : {x, std::nextafter(x, 0.0), std::nextafter(x, 1e300)}) both(y);
  for (double x : {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(),
                   std::numeric_limits<double>::max()})
    both(x);
  // NaNs whose payload lies below the top 16 bits (an infinity's, to a table keyed by them).
  for (uint64_t payload : {uint64_t{1}, uint64_t{0xFFFF}, uint64_t{1} << 47})
    both(std::bit_cast<double>(0x7FF0000000000000ull | payload));
  for (uint32_t b = 0; b < 0x10000; ++b) xs.push_back(f16_bits_to_double(static_cast<uint16_t>(b)));
  std::mt19937_64 rng(61);
  std::uniform_real_distribution<double> e(-30.0, 20.0);
  for (int i = 0; i < 200000; ++i) both(std::exp2(e(rng)));
  fia_hif8_check_store(xs);
}

TEST_CASE("FIA HiF8: the document's rules, each refused naming its field") {
  CHECK(rejection(fia_hif8_case(R"("keyAntiquantMode": 0)")) == "");
  CHECK(rejection(fia_hif8_case(R"("keyAntiquantMode": 0)", "bf16")) == "");
  CHECK(rejection(fia_hif8_case(R"("blockSize": 32)")) == "");
  const auto refused = [](const std::string& json, const std::string& pointer, const std::string& words) {
    const std::string r = rejection(json);
    CHECK_MESSAGE(r.rfind(pointer + ": ", 0) == 0, r);
    CHECK_MESSAGE(r.find(words) != std::string::npos, r);
  };
  refused(fia_hif8_case("", "f32"), "/dtypes/query", "FP16 or BF16 query");
  refused(fia_hif8_case(R"("keyAntiquantMode": 1)"), "/attributes/keyAntiquantMode",
          "per-channel模式，其支持的数据类型为INT8、INT4(INT32)、HIFLOAT8、FLOAT8_E4M3FN");
  refused(fia_hif8_case(R"("keyAntiquantMode": 0, "valueAntiquantMode": 1)"),
          "/attributes/valueAntiquantMode", "per-channel scales only");
  refused(fia_hif8_case(R"("antiquant_offset": true)"), "/attributes/antiquant_offset", "不支持offset");
  refused(fia_hif8_case(R"("antiquant_per_tensor": true)"), "/attributes/antiquant_per_tensor",
          "not per-tensor");
  refused(fia_hif8_case(R"("antiquant_combined": true)"), "/attributes/antiquant_combined",
          "separate keyAntiquantScale");
  refused(fia_hif8_case(R"("blockSize": 16)"), "/attributes/blockSize", "multiple of 32");
  refused(fia_hif8_case(R"("numHeads": 512, "numKeyValueHeads": 8)"), "/attributes/numHeads", "N <= 256");
  refused(fia_hif8_case(R"("keyAntiquantMode": 4, "blockSize": 32)"), "/attributes/keyAntiquantMode",
          "keyAntiquantMode 0");
}
