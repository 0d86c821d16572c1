// `kvbench bench` from the outside: exit codes, the copy-bandwidth line, the JSON figures.
// Nothing here asserts a speed: only that the figures are there and positive.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "bench/bench_case.hpp"
#include "cli_runner.hpp"
#include "copy_stub.hpp"
#include "vk/runtime.hpp"

using namespace kvbench;

namespace {

// A copy of 4 floats that "takes" scripted device times, so bench_case's figures are known
// exactly. With `writes` false it leaves its output poisoned: a FAIL.
class ScriptedCopy final : public CopyStub {
 public:
  explicit ScriptedCopy(bool writes) : CopyStub("scripted"), writes_(writes) {}
  // One real dispatch (a 16-byte copy), so that the device repeats and times it.
  double run_vulkan(Runtime& rt, TensorSet& io) const override {
    ++calls_;
    auto source = rt.buffer(16), destination = rt.buffer(16);
    const double ms = rt.dispatch(
        "copy_bandwidth", {{"source", source.get()}, {"destination", destination.get()}}, {{"count", 1}}, 1);
    if (writes_) io.at("y").bytes() = io.at("x").bytes();
    return ms;
  }
  size_t calls() const { return calls_; }

 private:
  bool writes_;
  mutable size_t calls_ = 0;
};

}  // namespace

TEST_CASE(
    "bench_case: a warm-up of at least 200 ms device time, then back-to-back timed runs of one submission") {
  Runtime rt;
  const CaseDef def{.file = "stub.json", .name = "scripted", .op = "stub"};
  const ScriptedCopy op(true);
  const BenchResult r = bench_case(def, op, rt, {.warmup = 3, .warmup_ms = 200, .reps = 4}, 0.016);
  // The check's run and one timed run: the repetitions are the device's, not the host's.
  CHECK(op.calls() == 2);
  CHECK(r.check.status == Status::pass);
  const RepeatedTiming& t = r.timing;
  CHECK(t.reps == 4);
  CHECK(t.warmup_count >= 3);
  CHECK(t.warmup_ms >= 200);  // measured by timestamps, not counted
  CHECK(t.time.min_ms > 0);
  CHECK(t.time.min_ms <= t.time.median_ms);
  CHECK(t.time.median_ms <= t.time.max_ms);
  REQUIRE(t.kernels.size() == 1);
  CHECK(t.kernels[0].shader == "copy_bandwidth");
  CHECK(r.bytes == 32);  // 16 bytes read, 16 written
  CHECK(r.gbps == doctest::Approx(32 / (t.time.median_ms * 1e6)));
  CHECK(r.percent_of_copy == doctest::Approx(100 * r.gbps / 0.016));
  // The clock is measured where the device has VK_KHR_shader_clock, and only there.
  CHECK(t.clock_mhz.has_value() == rt.info().shader_clock);
  if (t.clock_mhz) CHECK(*t.clock_mhz > 0);

  const ScriptedCopy wrong(false);
  const BenchResult w = bench_case(def, wrong, rt, {.warmup = 0, .reps = 2}, 0.016);
  CHECK(w.check.status == Status::fail);
  CHECK(w.timed());  // a wrong kernel is still timed; the table marks it FAIL
}

TEST_CASE("summarize_repeats: a repetition's time is the sum of its dispatches; each kernel its median") {
  RepeatOutcome o{.warmup_count = 7, .warmup_ms = 250};
  for (const double ms : {0.004, 0.001, 0.002, 0.003}) o.reps.push_back({{"a", ms}, {"b", 2 * ms}});
  o.clock_mhz = 1980;
  const RepeatedTiming t = summarize_repeats(o);
  CHECK(t.reps == 4);
  CHECK(t.warmup_count == 7);
  CHECK(t.warmup_ms == 250);
  CHECK(t.time.median_ms == doctest::Approx(0.0075));
  CHECK(t.time.min_ms == doctest::Approx(0.003));
  CHECK(t.time.max_ms == doctest::Approx(0.012));
  REQUIRE(t.kernels.size() == 2);
  CHECK(t.kernels[1].shader == "b");
  CHECK(t.kernels[1].ms == doctest::Approx(0.005));
  CHECK(t.clock_mhz == 1980);
  CHECK(summarize_repeats({}).reps == 0);
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

// One quick case: a 4-bit KV-cache write.
std::string one_cache_case() {
  return source_path("cases/pmx.KeyValueCache/odd_groups.json") +
         " --filter 'layout=0,quant_bit=4,quant_group=3\\]'";
}

// One `kvbench bench` of three cases, which the tests below share: a 4-bit KV-cache write,
// an FIA attention and an MHCA decode of three kernels. Every bench measures the copy
// bandwidth and warms up for 200 ms of device time first: one run instead of three saved
// 4 s of the unit tests.
const BenchWithJson& three_cases() {
  static const BenchWithJson bench = bench_with_json(
      source_path("cases/pmx.KeyValueCache/odd_groups.json") + " " +
          source_path("cases/aclnn.FusedInferAttentionScoreV3/sparse4_negative_pre.json") + " " +
          source_path("cases/pmx.dynamic_batching.MultiHeadCacheAttention/decode_4096.json") +
          " --filter 'layout=0,quant_bit=4,quant_group=3\\]|fia_sparse4|mhca_decode_4096.quant_bit=8' "
          "--warmup 1 --reps 3",
      "bench_three");
  return bench;
}

// The report's case named `name`.
const nlohmann::json& case_named(const nlohmann::json& report, const std::string& name) {
  for (const auto& c : report["cases"])
    if (c["name"] == name) return c;
  FAIL("no case " << name << " in the report");
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("bench: one case prints the copy bandwidth and writes positive figures to --json") {
  const auto& bench = three_cases();
  const auto& r = bench.run;
  const auto& j = bench.report;
  INFO(r.output);
  CHECK(r.status == 0);
  std::smatch m;
  REQUIRE(std::regex_search(r.output, m, std::regex(R"(copy bandwidth: ([0-9.]+) GB/s)")));
  CHECK(std::stod(m[1]) > 0);
  CHECK(r.output.find("3 passed, 0 failed, 0 skipped") != std::string::npos);

  CHECK(j["copy_bandwidth_gbps"].get<double>() > 0);
  CHECK(j["reps"] == 3);
  CHECK(j["flush_cache"] == false);
  CHECK(j["flush_bytes"].is_null());
  // The warm-up happened, was long enough by the device's own timestamps, and the clock
  // field is there: a number where the device has a shader clock, else "unknown".
  REQUIRE(j["cases"].size() == 3);
  const auto& c = case_named(j, "kvc_odd_groups[cache_layout=0,quant_bit=4,quant_group=3]");
  for (const auto& timing : {j["copy_timing"], c["timing"]}) {
    INFO(timing.dump());
    CHECK(timing["warmup_ms"].get<double>() >= 200);
    CHECK(timing["warmup_count"].get<int64_t>() >= 1);
    CHECK(timing["reps"] == 3);
    REQUIRE(timing.contains("shader_clock_mhz"));
    CHECK(timing["shader_clock_mhz"].is_null() == (timing["shader_clock_source"] == "unknown"));
    CHECK(timing["shader_clock_mhz"].is_null() == !j["shader_clock_extension"].get<bool>());
  }
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
  const auto& bench = three_cases();
  const auto& r = bench.run;
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("GFLOPS") != std::string::npos);
  const auto& c = case_named(bench.report, "fia_sparse4_negative_pre");
  // B 2, S1 10, S2 14 (offset 4), preTokens -3, nextTokens 6: row i sees keys i+7..i+10
  // clipped to 13, i.e. 4, 4, 4, 4, 3, 2, 1, 0, 0, 0 = 22 per batch; 2 heads; D 32.
  CHECK(c["flops"].get<double>() == 2 * 22 * 2 * 2.0 * (32 + 32));
  CHECK(c["gflops"].get<double>() > 0);
  CHECK(c["gflops"].get<double>() ==
        doctest::Approx(c["flops"].get<double>() / (c["median_ms"].get<double>() * 1e6)));
}

TEST_CASE("bench: a case of several kernels lists each with its median device time") {
  const auto& bench = three_cases();
  const auto& r = bench.run;
  INFO(r.output);
  CHECK(r.status == 0);
  const auto& c = case_named(bench.report, "mhca_decode_4096[quant_bit=8]");
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

TEST_CASE("bench: --flush-cache fills twice --cache-mib between the timed runs, and says so") {
  // 192 MiB: more than lavapipe's maxStorageBufferRange (128 MiB), so filled as two buffers.
  const auto bench =
      bench_with_json(one_cache_case() + " --reps 2 --flush-cache --cache-mib 96", "bench_flush");
  INFO(bench.run.output);
  CHECK(bench.run.status == 0);
  CHECK(bench.run.output.find("with the cache flushed between them") != std::string::npos);
  const auto& j = bench.report;
  CHECK(j["flush_cache"] == true);
  CHECK(j["flush_bytes"] == 192 << 20);
  REQUIRE(j["cases"].size() == 1);
  CHECK(j["cases"][0]["timing"]["reps"] == 2);
}

TEST_CASE("bench: unusable arguments exit 2") {
  const std::string file = source_path("tests/data/mixed/valid.json");
  CHECK(run_kvbench("bench").status == 2);
  CHECK(run_kvbench("bench " + file + " --reps 0").status == 2);
  CHECK(run_kvbench("bench " + file + " --warmup -1").status == 2);
  CHECK(run_kvbench("bench " + file + " --warmup-ms 100").status == 2);  // never under 200 ms
  CHECK(run_kvbench("bench " + file + " --flush-cache --cache-mib 0").status == 2);
  CHECK(run_kvbench("bench " + file + " --filter '('").status == 2);
  CHECK(run_kvbench("bench " + file + " --device 99").status == 2);
}
