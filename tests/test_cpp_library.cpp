// The C++ library (include/kvbench) from the outside, as a test suite would use it: goldens
// written by the kvbench binary, loaded through kvbench::Golden and judged by kvbench::check.
#include <doctest/doctest.h>

#include <filesystem>

#include <kvbench/check.hpp>

#include "cli_runner.hpp"

namespace {

// A fresh golden folder holding the cases of `file` that `filter` selects.
std::string goldens(const std::string& name, const std::string& file, const std::string& filter) {
  const auto dir = std::filesystem::temp_directory_path() / ("kvbench_cpp_library_" + name);
  std::filesystem::remove_all(dir);
  const CommandResult r =
      run_kvbench("golden " + source_path(file) + " --filter '" + filter + "' -o " + dir.string());
  REQUIRE_MESSAGE(r.status == 0, r.output);
  return dir.string();
}

}  // namespace

TEST_CASE("C++ library: a DequantizeGroup golden, computed from its inputs, passes; a planted error fails") {
  const auto dir =
      goldens("dqg", "cases/kvbench.DequantizeGroup/ppl.json", "bits=4,group_size=31,scale=f16,y=f32");
  const auto manifests = kvbench::golden_manifests(dir);
  REQUIRE(manifests.size() == 1);
  const kvbench::Golden g = kvbench::Golden::load(manifests[0]);
  CHECK(g.op() == "kvbench.DequantizeGroup");
  CHECK(g.inputs() == std::vector<std::string>{"x", "scale"});
  CHECK(g.outputs() == std::vector<std::string>{"y"});
  CHECK(g.number("group_size") == 31);
  CHECK(g.text("formula") == "ppl");
  CHECK(g.size("rows") == 3);
  CHECK(g.tolerance("y") == "exact (atol = rtol = 0)");
  CHECK(g.repro().find("--filter '^dqg_ppl\\[bits=4,group_size=31,scale=f16,y=f32\\]$'") !=
        std::string::npos);
  // The spec's formula, y = Y(S(q * s)) with one scale per row of 31: derived here, not read.
  const kvbench::Array& x = g.input("x");
  const kvbench::Array& scale = g.input("scale");
  CHECK(x.dtype() == "s4");
  kvbench::Array y = g.output("y");
  for (size_t i = 0; i < y.size(); ++i) y.set(i, kvbench::round_to("f16", x.get(i) * scale.get(i / 31)));
  const kvbench::CheckResult pass = kvbench::check(g, {{"y", y}});
  CHECK_MESSAGE(pass.passed(), pass.report);
  CHECK(pass.report.empty());
  REQUIRE(pass.outputs.size() == 1);
  CHECK(pass.outputs[0].elements == 93);

  kvbench::Array off = y;
  off.set(40, off.get(40) + 1.0 / 64);
  const kvbench::CheckResult fail = kvbench::check(g, {{"y", off}});
  CHECK_FALSE(fail.passed());
  CHECK(fail.outputs[0].violations == 1);
  CHECK(fail.outputs[0].worst == std::vector<int64_t>{1, 9});
  CHECK(fail.report.find("y: 1 of 93 elements out of tolerance exact (atol = rtol = 0)") !=
        std::string::npos);
  CHECK(fail.report.find("worst: y[1,9] = ") != std::string::npos);
  CHECK(fail.report.find("repro: kvbench run ") != std::string::npos);
}

TEST_CASE("C++ library: unwritten, missing, extra and misshapen outputs fail, never pass") {
  const auto dir =
      goldens("dqg2", "cases/kvbench.DequantizeGroup/ppl.json", "bits=4,group_size=31,scale=f16,y=f32");
  const kvbench::Golden g = kvbench::Golden::load(kvbench::golden_manifests(dir)[0]);
  const kvbench::CheckResult unwritten = kvbench::check(g, {{"y", g.output("y")}});
  CHECK_FALSE(unwritten.passed());
  CHECK(unwritten.outputs[0].nonfinite_mismatches == 93);
  const kvbench::CheckResult missing = kvbench::check(g, {});
  CHECK_FALSE(missing.passed());
  CHECK(missing.error == "no actual output 'y'");
  const kvbench::CheckResult extra = kvbench::check(g, {{"y", g.expected("y")}, {"z", g.expected("y")}});
  CHECK_FALSE(extra.passed());
  CHECK(extra.error.find("has no output 'z'") != std::string::npos);
  const kvbench::CheckResult wrong = kvbench::check(g, {{"y", g.input("scale")}});
  CHECK_FALSE(wrong.passed());
  CHECK(wrong.error.find("output 'y' is f16[3,1], expected f32[3,31]") != std::string::npos);
  CHECK_FALSE(kvbench::check_file(g, dir + "/no_such.safetensors").passed());
  CHECK_THROWS_AS(g.input("y"), std::out_of_range);
  CHECK_THROWS_AS(kvbench::Golden::load(dir + "/no_such.json"), std::runtime_error);
}

TEST_CASE("C++ library: an in-place KV cache must keep the bits of every element it does not write") {
  const auto dir = goldens("kvc", "cases/pmx.KeyValueCache/odd_groups.json",
                           "cache_layout=0,quant_bit=8,quant_group=3\\]");
  const kvbench::Golden g = kvbench::Golden::load(kvbench::golden_manifests(dir)[0]);
  CHECK(g.is_in_place("cache"));
  std::map<std::string, kvbench::Array> outputs;
  for (const std::string& o : g.outputs()) outputs.emplace(o, g.expected(o));
  const kvbench::CheckResult pass = kvbench::check(g, outputs);
  CHECK_MESSAGE(pass.passed(), pass.report);
  // Layer 0, batch 1 of MaxB 2 lies outside batch B = 1: never written.
  kvbench::Array& cache = outputs.at("cache");
  const size_t outside = cache.size() - 1;
  cache.set(outside, cache.get(outside) == 0 ? 1 : 0);
  const kvbench::CheckResult fail = kvbench::check(g, outputs);
  CHECK_FALSE(fail.passed());
  const auto it =
      std::find_if(fail.outputs.begin(), fail.outputs.end(), [](auto& o) { return o.name == "cache"; });
  REQUIRE(it != fail.outputs.end());
  CHECK(it->untouched_changed == 1);
  CHECK(fail.report.find("outside the written region, its bits must not change") != std::string::npos);
}
