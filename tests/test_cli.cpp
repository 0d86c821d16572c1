// The command line from the outside: exit codes, error messages naming file and field.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include <set>
#include <sstream>

#include "cli_runner.hpp"
#include "report/run_reporter.hpp"

TEST_CASE("run: invalid case files are named with their field, valid cases still run, exit 2") {
  const auto r = run_kvbench("run " + source_path("tests/data/mixed"));
  CHECK(r.status == 2);
  CHECK(r.output.find("mixed/bad_group.json: /attributes/quant_group") != std::string::npos);
  CHECK(r.output.find("mixed/bad_swept_group.json: /sweep/quant_group/1") != std::string::npos);
  CHECK(r.output.find("mixed/missing_seed.json: /seed: required field is missing") != std::string::npos);
  CHECK(r.output.find("mixed/past_the_end.json: /inputs/start_pos") != std::string::npos);
  CHECK(r.output.find("mixed/unknown_op.json: /op") != std::string::npos);
  CHECK(r.output.find("mixed/malformed.json: invalid JSON") != std::string::npos);
  CHECK(r.output.find("PASS  valid_small") != std::string::npos);
  CHECK(r.output.find("PASS  bad_swept_group[quant_group=8]") != std::string::npos);
  CHECK(r.output.find("2 passed, 0 failed, 0 skipped") != std::string::npos);
}

TEST_CASE("run: all valid cases pass -> exit 0; --filter selects by expanded name") {
  const auto r = run_kvbench("run " + source_path("tests/data/mixed/valid.json"));
  CHECK(r.status == 0);
  const auto f = run_kvbench("run " + source_path("cases/pmx.KeyValueCache/odd_groups.json") +
                             " --filter 'layout=0,quant_bit=4,quant_group=3\\]'");
  CHECK(f.status == 0);
  CHECK(f.output.find("1 passed, 0 failed, 0 skipped") != std::string::npos);
}

TEST_CASE("run: unusable arguments exit 2") {
  CHECK(run_kvbench("run").status == 2);
  CHECK(run_kvbench("run --no-such-flag x").status == 2);
  CHECK(run_kvbench("run " + source_path("tests/data/mixed/valid.json") + " --filter '('").status == 2);
  CHECK(run_kvbench("run /no/such/path").status == 2);
  CHECK(run_kvbench("run " + source_path("tests/data/mixed/valid.json") + " --device 99").status == 2);
  const CommandResult unknown = run_kvbench("frobnicate");
  CHECK(unknown.status == 2);
  CHECK(unknown.output.find("unknown subcommand 'frobnicate'; the subcommands are run, bench, golden, check, "
                            "verify, list, ops, "
                            "devices") != std::string::npos);
}

TEST_CASE("run --json writes one entry per case with the figures") {
  const auto path = std::filesystem::temp_directory_path() / "kvbench_test_report.json";
  const auto r =
      run_kvbench("run " + source_path("tests/data/mixed/valid.json") + " --json " + path.string());
  REQUIRE(r.status == 0);
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  REQUIRE(j["cases"].size() == 1);
  CHECK(j["cases"][0]["name"] == "valid_small");
  CHECK(j["cases"][0]["status"] == "PASS");
  CHECK(j["summary"]["passed"] == 1);
  // key, value, cache, scale
  CHECK(j["cases"][0]["outputs"].size() == 4);
  std::filesystem::remove(path);
}

TEST_CASE("list prints expanded names with parameters; devices names the default") {
  const auto l = run_kvbench("list " + source_path("cases/pmx.KeyValueCache/odd_groups.json"));
  CHECK(l.status == 0);
  CHECK(l.output.find("kvc_odd_groups[cache_layout=0,quant_bit=4,quant_group=3]  pmx.KeyValueCache") !=
        std::string::npos);
  CHECK(l.output.find("12 cases") != std::string::npos);
  const auto d = run_kvbench("devices");
  CHECK(d.status == 0);
  CHECK(d.output.find("[default]") != std::string::npos);
}

namespace {

std::vector<std::string> listed_names(const std::string& output) {
  std::vector<std::string> names;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    const auto sep = line.find("  ");
    if (sep != std::string::npos && line.find("  pmx.") != std::string::npos)
      names.push_back(line.substr(0, sep));
  }
  return names;
}

}  // namespace

TEST_CASE("--shard K/N: N shards cover every case exactly once") {
  const std::string path = source_path("cases/pmx.KeyValueCache/unquantized.json");
  const auto all = listed_names(run_kvbench("list " + path).output);
  REQUIRE(all.size() == 72);
  std::multiset<std::string> covered;
  for (int k = 1; k <= 3; ++k) {
    const auto part =
        listed_names(run_kvbench("list " + path + " --shard " + std::to_string(k) + "/3").output);
    CHECK(part.size() > 0);
    CHECK(part.size() < all.size());
    covered.insert(part.begin(), part.end());
  }
  CHECK(covered == std::multiset<std::string>(all.begin(), all.end()));
  CHECK(run_kvbench("list " + path + " --shard 4/3").status == 2);
  CHECK(run_kvbench("list " + path + " --shard 0/3").status == 2);
  CHECK(run_kvbench("list " + path + " --shard x").status == 2);
}

TEST_CASE("repro line: the printed command reruns exactly that case") {
  const std::string file = source_path("cases/pmx.KeyValueCache/odd_groups.json");
  const std::string name = "kvc_odd_groups[cache_layout=1,quant_bit=4,quant_group=3]";
  const std::string repro = kvbench::repro_command(KVBENCH_BINARY, file, name);
  CHECK(repro == std::string(KVBENCH_BINARY) + " run '" + file +
                     "' --filter '^kvc_odd_groups\\[cache_layout=1,quant_bit=4,quant_group=3\\]$'");
  const auto r = run_kvbench(repro.substr(std::string(KVBENCH_BINARY).size() + 1));
  CHECK(r.status == 0);
  CHECK(r.output.find("1 passed, 0 failed, 0 skipped") != std::string::npos);
  CHECK(r.output.find(name) != std::string::npos);
}

TEST_CASE("run --junit: one testcase per case, invalid case files as errors") {
  const auto path = std::filesystem::temp_directory_path() / "kvbench_test_junit.xml";
  const auto r = run_kvbench("run " + source_path("tests/data/mixed") + " --junit " + path.string());
  CHECK(r.status == 2);
  std::ifstream in(path);
  const std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(xml.find("<testsuite name=\"kvbench\" tests=\"8\" failures=\"0\" errors=\"6\" skipped=\"0\"") !=
        std::string::npos);
  CHECK(xml.find("<testcase classname=\"pmx.KeyValueCache\" name=\"valid_small\"") != std::string::npos);
  CHECK(xml.find("<error message=\"") != std::string::npos);
  CHECK(xml.find("/attributes/quant_group") != std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("slow case files run only when asked") {
  const auto dir = std::filesystem::temp_directory_path() / "kvbench_test_slow";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "slow.json")
      << R"({"op": "kvbench.QuantizeGroup", "name": "slow_one", "seed": 1, "slow": true,
    "attributes": {"bits": 8, "group_size": 4}, "shapes": {"rows": 1, "length": 8}})";
  std::ofstream(dir / "fast.json") << R"({"op": "kvbench.QuantizeGroup", "name": "fast_one", "seed": 1,
    "attributes": {"bits": 8, "group_size": 4}, "shapes": {"rows": 1, "length": 8}})";
  CHECK(run_kvbench("run " + dir.string()).output.find("1 passed, 0 failed, 0 skipped") != std::string::npos);
  const auto only = run_kvbench("run " + dir.string() + " --slow only");
  CHECK(only.output.find("PASS  slow_one") != std::string::npos);
  CHECK(only.output.find("fast_one") == std::string::npos);
  CHECK(run_kvbench("run " + dir.string() + " --slow include").output.find("2 passed") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("selection: an empty selection is an error unless allowed; --op and several --filter select") {
  const std::string v = source_path("tests/data/mixed/valid.json");
  const auto none = run_kvbench("run " + v + " --filter nomatch");
  CHECK(none.status == 2);
  CHECK(none.output.find("error: no case selected") != std::string::npos);
  const auto allowed = run_kvbench("run " + v + " --filter nomatch --allow-empty");
  CHECK(allowed.status == 0);
  CHECK(allowed.output.find("0 passed, 0 failed, 0 skipped") != std::string::npos);
  const std::string two =
      source_path("cases/kvbench.QuantizeGroup") + " " + source_path("cases/kvbench.DequantizeGroup");
  const auto op = run_kvbench("list " + two + " --op kvbench.DequantizeGroup");
  CHECK(op.status == 0);
  CHECK(op.output.find("kvbench.QuantizeGroup") == std::string::npos);
  CHECK(op.output.find("246 cases") != std::string::npos);
  const auto filters = run_kvbench("list " + two + " --filter '^dqg_ppl' --filter '^qg_scale_dtypes' " + v);
  CHECK(filters.status == 0);
  CHECK(filters.output.find("valid_small") == std::string::npos);  // the filters still apply to every path
  CHECK(filters.output.find("66 cases") != std::string::npos);     // 54 + 12
  CHECK(run_kvbench("list " + v + " --op pmx.KeyValueCach").status == 2);
}

TEST_CASE("run: -x stops after the first failing case") {
  // The golden's tolerance is tightened below the kernel's rounding so that every case fails.
  const auto r = run_kvbench("run " + source_path("tests/data/fail_fast") + " -x");
  CHECK(r.status == 1);
  CHECK(r.output.find("--fail-fast: stopped after the first failure; 2 cases not run") != std::string::npos);
  CHECK(r.output.find("0 passed, 1 failed, 0 skipped") != std::string::npos);
}

TEST_CASE("run: SIGTERM mid-run writes the reports of the finished cases, marked interrupted, exit 143") {
  const auto dir = std::filesystem::temp_directory_path() / "kvbench_test_interrupt";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string json = (dir / "r.json").string(), status = (dir / "status").string();
  // The signal is sent once the first case has passed (up to 60 s), with 498 SDPA and MHCA
  // cases to go: it lands mid-run however fast the kernels are.
  const std::string out = (dir / "out").string();
  const std::string script =
      std::string(KVBENCH_BINARY) + " run " + source_path("cases/dnnl.SDPACompressedKV") + " " +
      source_path("cases/pmx.dynamic_batching.MultiHeadCacheAttention") + " --compile-threads 0 --json " +
      json + " > " + out + " 2>&1 & pid=$!; i=0; while [ $i -lt 600 ] && ! grep -q PASS " + out +
      "; do sleep 0.1; i=$((i+1)); done; kill -TERM $pid; wait $pid; echo $? > " + status;
  REQUIRE(std::system(("sh -c '" + script + "'").c_str()) == 0);
  std::ifstream st(status);
  int code = 0;
  st >> code;
  CHECK(code == 143);
  std::ifstream in(json);
  const nlohmann::json report = nlohmann::json::parse(in);
  CHECK(report["interrupted"] == true);
  CHECK(report["summary"]["selected"] == 398 + 150);
  CHECK(!report["cases"].empty());
  CHECK(report["cases"].size() < 398 + 150);
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "run: every case of an operator skipping on the device is exit 1 with the reason, unless --allow-skip") {
  // The cpu attention kernel forced on lavapipe at 4 lanes: every attention case skips.
  const std::string env = "KVBENCH_KERNEL=cpu LP_NATIVE_VECTOR_WIDTH=128 ";
  const std::string args = " run " + source_path("cases/dnnl.SDPACompressedKV/edges.json");
  const auto r = run_command(env + KVBENCH_BINARY + args);
  CHECK(r.status == 1);
  CHECK(r.output.find("skipped, e.g.: the cpu attention kernel") != std::string::npos);
  CHECK(r.output.find("error: every selected case of the operator(s) above skipped") != std::string::npos);
  const auto allowed = run_command(env + KVBENCH_BINARY + args + " --allow-skip");
  CHECK(allowed.status == 0);
  CHECK(allowed.output.find("error: every selected case") == std::string::npos);
  // Another operator's cases passing does not hide it.
  const auto mixed =
      run_command(env + KVBENCH_BINARY + args + " " + source_path("tests/data/mixed/valid.json"));
  CHECK(mixed.status == 1);
}

// Not under the sanitizers: loading RADV in the sanitized binary is not covered by
// tools/lsan.supp's preloaded-driver scheme (.ci/run's ASan stage preloads lavapipe only).
#ifndef KVBENCH_SANITIZED
TEST_CASE("run: with RADV_FORCE_FAMILY set, cases do not run on RADV's compile-only null device") {
  const auto r = run_command(std::string("RADV_FORCE_FAMILY=vega10 ") + KVBENCH_BINARY + " run " +
                             source_path("tests/data/mixed/valid.json"));
  CHECK(r.status == 0);
  CHECK(r.output.find("Null hardware") == std::string::npos);
}
#endif

TEST_CASE("run --compile-threads: the pipelines compiled ahead change no result") {
  const std::string cases = source_path("cases/pmx.dynamic_batching.MultiHeadCacheAttention/gqa.json");
  const auto ahead = run_kvbench("run " + cases + " --compile-threads 2");
  const auto alone = run_kvbench("run " + cases + " --compile-threads 0");
  CHECK(ahead.status == 0);
  CHECK(alone.status == 0);
  auto summary = [](const std::string& out) {  // the closing "N passed, N failed, N skipped" line
    const size_t at = out.rfind(" passed, "), begin = out.rfind('\n', at) + 1;
    return at == std::string::npos ? std::string() : out.substr(begin, out.find('\n', at) - begin);
  };
  CHECK(summary(ahead.output).find(" failed, 0 skipped") != std::string::npos);
  CHECK(summary(ahead.output) == summary(alone.output));
  CHECK(run_kvbench("run " + cases + " --compile-threads 17").status == 2);
}

TEST_CASE("coverage --pairs: a count outside 0..100000 is refused with the range, exit 2") {
  const std::string cases = source_path("tests/data/mixed/valid.json");
  for (const char* bad : {"-1", "99999999999999999999", "100001", "x"}) {
    CAPTURE(bad);
    const auto r = run_kvbench("coverage " + cases + " --pairs " + bad);
    CHECK(r.status == 2);
    CHECK(r.output.find("--pairs") != std::string::npos);
    CHECK(r.output.find("value pairs of two enumerated keys") == std::string::npos);  // no report
  }
  const auto ok = run_kvbench("coverage " + cases + " --pairs 100000");
  CHECK(ok.status == 0);
  const auto help = run_kvbench("coverage --help");
  CHECK(help.output.find("0 to 100000") != std::string::npos);
}
