// The command line from the outside: exit codes, error messages naming file and field.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

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
  CHECK(run_kvbench("frobnicate").status == 2);
}

TEST_CASE("run --json writes one entry per case with the figures") {
  const auto path = std::filesystem::temp_directory_path() / "kvbench_test_report.json";
  const auto r = run_kvbench("run " + source_path("tests/data/mixed/valid.json") + " --json " + path.string());
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
  CHECK(l.output.find("kvc_odd_groups[cache_layout=0,quant_bit=4,quant_group=3]  pmx.KeyValueCache") != std::string::npos);
  CHECK(l.output.find("12 cases") != std::string::npos);
  const auto d = run_kvbench("devices");
  CHECK(d.status == 0);
  CHECK(d.output.find("[default]") != std::string::npos);
}
