// `kvbench bench` from the outside: exit codes, the copy-bandwidth line, the JSON figures.
// Nothing here asserts a speed: only that the figures are there and positive.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "bench/bench_case.hpp"
#include "cli_runner.hpp"
#include "vk/runtime.hpp"

using namespace kvbench;

namespace {

// An operator that copies 4 floats and "takes" scripted device times, so bench_case's
// figures are known exactly. With `writes` false it leaves its output poisoned: a FAIL.
const Signature& scripted_signature() {
  static const Signature sig{.id = "stub",
                             .tensors = {{.name = "x", .dtype_rule = "f32"},
                                         {.name = "y", .role = Role::output, .dtype_rule = "f32"}}};
  return sig;
}

class ScriptedCopy final : public OpCase {
 public:
  ScriptedCopy(std::vector<double> times_ms, bool writes)
      : OpCase(Args(CaseDef{.file = "stub.json", .name = "scripted", .op = "stub"}, scripted_signature())),
        times_(std::move(times_ms)),
        writes_(writes) {}
  std::string describe() const override { return "scripted copy"; }
  std::vector<TensorSpec> tensor_specs() const override { return {{"x", DType::f32, {4}}, {"y", DType::f32, {4}}}; }
  void fill(Tensor& x) const override {
    for (size_t i = 0; i < 4; ++i) x.set(i, 1.5 * static_cast<double>(i));
  }
  std::vector<Expected> reference(const TensorSet& in) const override {
    const std::vector<double> x = in.at("x").values();
    return expected_list(Expected::output(in.at("y"), x, x));
  }
  double run_vulkan(Runtime&, TensorSet& io) const override {
    if (writes_) io.at("y").bytes() = io.at("x").bytes();
    return times_[calls_++ % times_.size()];
  }
  size_t calls() const { return calls_; }

 private:
  std::vector<double> times_;
  bool writes_;
  mutable size_t calls_ = 0;
};

}  // namespace

TEST_CASE("bench_case: warm-up runs are not counted; median, min, max, bandwidth and % of copy") {
  Runtime rt;
  const CaseDef def{.file = "stub.json", .name = "scripted", .op = "stub"};
  // The check's run, 1 warm-up, then 4 timed runs: 0.004, 0.001, 0.002, 0.003 ms.
  const ScriptedCopy op({9, 9, 0.004, 0.001, 0.002, 0.003}, true);
  const BenchResult r = bench_case(def, op, rt, {.warmup = 1, .reps = 4}, 0.016);
  CHECK(op.calls() == 6);
  CHECK(r.check.status == Status::pass);
  CHECK(r.time.median_ms == doctest::Approx(0.0025));
  CHECK(r.time.min_ms == doctest::Approx(0.001));
  CHECK(r.time.max_ms == doctest::Approx(0.004));
  CHECK(r.bytes == 32);  // 16 bytes read, 16 written
  CHECK(r.gbps == doctest::Approx(0.0128));  // 32 bytes in 2.5 us
  CHECK(r.percent_of_copy == doctest::Approx(80));

  const ScriptedCopy wrong({1}, false);
  const BenchResult w = bench_case(def, wrong, rt, {.warmup = 0, .reps = 2}, 0.016);
  CHECK(w.check.status == Status::fail);
  CHECK(w.timed());  // a wrong kernel is still timed; the table marks it FAIL
}

namespace {

// `kvbench bench ARGS --json FILE`, FILE a temporary named after `stem`: the command's output
// and status, and the report it wrote (null when it wrote none). Tests name its members by
// references, not a structured binding: clang 14 cannot capture a binding in the lambdas
// that INFO expands to.
struct BenchWithJson {
  CommandResult run;
  nlohmann::json report;
};

BenchWithJson bench_with_json(const std::string& args, const std::string& stem) {
  const auto path = std::filesystem::temp_directory_path() / ("kvbench_test_" + stem + ".json");
  std::filesystem::remove(path);
  BenchWithJson b{run_kvbench("bench " + args + " --json " + path.string()), nullptr};
  if (std::ifstream in(path); in) b.report = nlohmann::json::parse(in);
  std::filesystem::remove(path);
  return b;
}

}  // namespace

TEST_CASE("bench: one case prints the copy bandwidth and writes positive figures to --json") {
  const auto bench = bench_with_json(source_path("cases/pmx.KeyValueCache/odd_groups.json") +
                                          " --filter 'layout=0,quant_bit=4,quant_group=3\\]' --warmup 1 --reps 3",
                                      "bench");
  const auto& r = bench.run;
  const auto& j = bench.report;
  INFO(r.output);
  CHECK(r.status == 0);
  std::smatch m;
  REQUIRE(std::regex_search(r.output, m, std::regex(R"(copy bandwidth: ([0-9.]+) GB/s)")));
  CHECK(std::stod(m[1]) > 0);
  CHECK(r.output.find("1 passed, 0 failed, 0 skipped") != std::string::npos);

  CHECK(j["copy_bandwidth_gbps"].get<double>() > 0);
  CHECK(j["reps"] == 3);
  REQUIRE(j["cases"].size() == 1);
  const auto& c = j["cases"][0];
  CHECK(c["name"] == "kvc_odd_groups[cache_layout=0,quant_bit=4,quant_group=3]");
  CHECK(c["op"] == "pmx.KeyValueCache");
  CHECK(c["status"] == "PASS");
  CHECK(c["median_ms"].get<double>() > 0);
  CHECK(c["min_ms"].get<double>() <= c["median_ms"].get<double>());
  CHECK(c["median_ms"].get<double>() <= c["max_ms"].get<double>());
  CHECK(c["bytes"].get<double>() > 0);
  CHECK(c["gbps"].get<double>() > 0);
  CHECK(c["percent_of_copy"].get<double>() > 0);
  CHECK(c["flops"].is_null());  // a cache write counts no FLOPs
  CHECK(c["gflops"].is_null());
}

TEST_CASE("bench: attention cases report GFLOPS beside GB/s, in the table and the JSON") {
  const auto bench = bench_with_json(
      source_path("cases/aclnn.FusedInferAttentionScoreV3/sparse4_negative_pre.json") + " --warmup 1 --reps 2", "bench_gflops");
  const auto& r = bench.run;
  const auto& j = bench.report;
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("GFLOPS") != std::string::npos);
  REQUIRE(j["cases"].size() == 1);
  const auto& c = j["cases"][0];
  // B 2, S1 10, S2 14 (offset 4), preTokens -3, nextTokens 6: row i sees keys i+7..i+10
  // clipped to 13, i.e. 4, 4, 4, 4, 3, 2, 1, 0, 0, 0 = 22 per batch; 2 heads; D 32.
  CHECK(c["flops"].get<double>() == 2 * 22 * 2 * 2.0 * (32 + 32));
  CHECK(c["gflops"].get<double>() > 0);
  CHECK(c["gflops"].get<double>() == doctest::Approx(c["flops"].get<double>() / (c["median_ms"].get<double>() * 1e6)));
}

TEST_CASE("bench: a case of several kernels lists each with its median device time") {
  const auto bench = bench_with_json(source_path("cases/pmx.dynamic_batching.MultiHeadCacheAttention/decode_4096.json") +
                                          " --filter 'quant_bit=8' --warmup 1 --reps 3",
                                      "bench_kernels");
  const auto& r = bench.run;
  const auto& j = bench.report;
  INFO(r.output);
  CHECK(r.status == 0);
  REQUIRE(j["cases"].size() == 1);
  const auto& c = j["cases"][0];
  // MHCA stores the new K/V, runs the attention kernel (gpu- or cpu-shaped), then merges the splits.
  const auto& k = c["kernels"];
  REQUIRE(k.size() == 3);
  CHECK(k[0]["shader"] == "mhca_store");
  CHECK(k[1]["shader"].get<std::string>().rfind("mhca_attention", 0) == 0);
  CHECK(k[2]["shader"] == "attention_merge");
  double sum = 0;
  for (const auto& e : k) {
    CHECK(e["median_ms"].get<double>() > 0);
    sum += e["median_ms"].get<double>();
  }
  // The medians of the parts need not add up to the median of the whole, but come close.
  CHECK(sum == doctest::Approx(c["median_ms"].get<double>()).epsilon(0.5));
  const auto line = r.output.find("kernels: mhca_store ");
  CHECK(line != std::string::npos);
  CHECK(r.output.find("attention_merge", line) != std::string::npos);
}

TEST_CASE("bench: unusable arguments exit 2") {
  const std::string file = source_path("tests/data/mixed/valid.json");
  CHECK(run_kvbench("bench").status == 2);
  CHECK(run_kvbench("bench " + file + " --reps 0").status == 2);
  CHECK(run_kvbench("bench " + file + " --warmup -1").status == 2);
  CHECK(run_kvbench("bench " + file + " --filter '('").status == 2);
  CHECK(run_kvbench("bench " + file + " --device 99").status == 2);
}
