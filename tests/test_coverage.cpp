// kvbench coverage: counts of enumerated values, values never used that the operator allows,
// value pairs never combined (probed with the operator's constraint checker), integer ranges
// and boundaries, on two small KeyValueCache case files.
#include <doctest/doctest.h>

#include <algorithm>

#include "cases/case_loader.hpp"
#include "cli_runner.hpp"
#include "coverage/coverage.hpp"

using namespace kvbench;

namespace {

std::vector<SelectedCase> kvc_suite() {
  const nlohmann::json base = nlohmann::json::parse(R"({"op": "pmx.KeyValueCache", "name": "a", "seed": 1,
    "attributes": {"num_layer": 1, "layer_idx": 0, "quant_bit": 8},
    "shapes": {"batch": 1, "seqlen": 2, "num_heads": 2, "head_dim": 16, "max_seqlen": 8},
    "inputs": {"start_pos": 1}})");
  nlohmann::json plain = base;
  plain["name"] = "b";
  plain["attributes"]["quant_bit"] = 0;
  plain["attributes"]["cache_layout"] = 1;
  plain["inputs"]["start_pos"] = 0;
  std::vector<SelectedCase> out;
  for (const auto& doc : {base, plain}) {
    auto loaded = expand_case_document(doc, "t.json", {});
    REQUIRE(loaded.cases.size() == 1);
    auto op = instantiate_case(*find_operator("pmx.KeyValueCache"), loaded.cases[0], {});
    out.push_back({loaded.cases[0], std::move(op)});
  }
  return out;
}

const CoveredValue& value_of(const OperatorCoverage& c, const std::string& key, const nlohmann::json& v) {
  for (const auto& k : c.enumerated)
    if (k.name() == key)
      for (const auto& x : k.values)
        if (x.value == v) return x;
  FAIL("no value " << v.dump() << " of " << key);
  throw std::logic_error("unreachable");
}

bool never_combined(const OperatorCoverage& c, const std::string& a, const nlohmann::json& va,
                    const std::string& b, const nlohmann::json& vb) {
  return std::any_of(c.pairs_never_combined.begin(), c.pairs_never_combined.end(), [&](const ValuePair& p) {
    return (p.a_key == a && p.a == va && p.b_key == b && p.b == vb) ||
           (p.a_key == b && p.a == vb && p.b_key == a && p.b == va);
  });
}

}  // namespace

TEST_CASE(
    "coverage: values with their cases, unused values probed, pairs never combined, integer boundaries") {
  const auto suite = kvc_suite();
  const auto report = compute_coverage(suite);
  REQUIRE(report.size() == 1);
  const OperatorCoverage& c = report[0];
  CHECK(c.op == "pmx.KeyValueCache");
  CHECK(c.cases == 2);
  CHECK(value_of(c, "attributes/quant_bit", 8).cases == 1);
  CHECK(value_of(c, "attributes/quant_bit", 0).cases == 1);
  CHECK(value_of(c, "attributes/quant_bit", 4).cases == 0);
  CHECK(value_of(c, "attributes/quant_bit", 4).allowed == true);  // a probe with quant_bit 4 instantiates
  CHECK(value_of(c, "dtypes/current_key", "f16").cases == 2);
  CHECK(value_of(c, "dtypes/current_key", "f32").allowed == true);
  CHECK(value_of(c, "dtypes/scale", "f16").cases == 1);  // only the quantized case has a scale
  CHECK(never_combined(c, "attributes/quant_bit", 8, "attributes/cache_layout", 1));
  CHECK(never_combined(c, "attributes/quant_bit", 4, "attributes/cache_layout", 0));
  CHECK(!never_combined(c, "attributes/quant_bit", 8, "attributes/cache_layout", 0));  // case a
  // A scale dtype with quant_bit 0 instantiates, but the case has no scale: not a combination.
  CHECK(!never_combined(c, "attributes/quant_bit", 0, "dtypes/scale", "f32"));
  CHECK(c.pairs_covered + c.pairs_not_allowed + c.pairs_never_combined.size() == c.pair_combinations);
  const auto start = std::find_if(c.integers.begin(), c.integers.end(),
                                  [](const IntegerRange& r) { return r.key == "start_pos"; });
  REQUIRE(start != c.integers.end());
  CHECK(start->min == 0);
  CHECK(start->max == 1);
  CHECK(start->boundaries == std::vector<std::pair<int64_t, bool>>{{0, true}, {1, true}});
  const auto batch = std::find_if(c.integers.begin(), c.integers.end(),
                                  [](const IntegerRange& r) { return r.key == "batch"; });
  REQUIRE(batch != c.integers.end());
  CHECK(batch->boundaries == std::vector<std::pair<int64_t, bool>>{{1, true}});  // 0 is below its minimum
  // The table and the JSON say the same.
  const std::string table = coverage_table(report);
  CHECK(table.find("pmx.KeyValueCache: 2 cases") != std::string::npos);
  CHECK(table.find("never used although allowed: cache_layout") == std::string::npos);  // both layouts used
  CHECK(table.find("quant_bit=4") != std::string::npos);
  const nlohmann::json j = coverage_json(report);
  CHECK(j["operators"][0]["never_used"].size() >= 2);  // quant_bit 4, current_key f32, ...
  CHECK(j["operators"][0]["pairs"]["never_combined"].size() == c.pairs_never_combined.size());
}

TEST_CASE("coverage: the command prints the table, writes the JSON and exits 0") {
  const auto r = run_kvbench("coverage " + source_path("tests/data/mixed/valid.json") +
                             " --json /tmp/kvbench_coverage_test.json");
  CHECK(r.status == 0);
  CHECK(r.output.find("enumerated values") != std::string::npos);
  CHECK(run_kvbench("coverage /nonexistent").status == 2);
}
