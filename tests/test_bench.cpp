// `kvbench bench` from the outside: exit codes, the copy-bandwidth line, the JSON figures.
// Nothing here asserts a speed: only that the figures are there and positive.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

TEST_CASE("bench: one case prints the copy bandwidth and writes positive figures to --json") {
  const auto path = std::filesystem::temp_directory_path() / "kvbench_test_bench.json";
  const auto r = run_kvbench("bench " + source_path("cases/pmx.KeyValueCache/odd_groups.json") +
                             " --filter 'layout=0,quant_bit=4,quant_group=3\\]' --warmup 1 --reps 3 --json " +
                             path.string());
  INFO(r.output);
  CHECK(r.status == 0);
  std::smatch m;
  REQUIRE(std::regex_search(r.output, m, std::regex(R"(copy bandwidth: ([0-9.]+) GB/s)")));
  CHECK(std::stod(m[1]) > 0);
  CHECK(r.output.find("1 passed, 0 failed, 0 skipped") != std::string::npos);

  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
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
  std::filesystem::remove(path);
}

TEST_CASE("bench: unusable arguments exit 2") {
  const std::string file = source_path("tests/data/mixed/valid.json");
  CHECK(run_kvbench("bench").status == 2);
  CHECK(run_kvbench("bench " + file + " --reps 0").status == 2);
  CHECK(run_kvbench("bench " + file + " --warmup -1").status == 2);
  CHECK(run_kvbench("bench " + file + " --filter '('").status == 2);
  CHECK(run_kvbench("bench " + file + " --device 99").status == 2);
}
