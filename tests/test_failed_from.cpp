// run --failed-from REPORT: rerun only what failed or was invalid in an earlier --json report.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_runner.hpp"

namespace fs = std::filesystem;

TEST_CASE("run --failed-from: only the failed cases of the earlier report run again") {
  const fs::path dir = fs::temp_directory_path() / "kvbench_test_failed_from";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string paths =
      source_path("tests/data/fail_fast") + " " + source_path("tests/data/mixed/valid.json");
  const std::string report = (dir / "first.json").string();
  REQUIRE(run_kvbench("run " + paths + " --json " + report).status == 1);  // 3 failed, valid_small passed
  const auto again = run_kvbench("run " + paths + " --failed-from " + report);
  CHECK(again.status == 1);
  CHECK(again.output.find("0 passed, 3 failed, 0 skipped") != std::string::npos);
  CHECK(again.output.find("valid_small") == std::string::npos);

  // A report with nothing failed selects nothing: an error unless --allow-empty.
  const std::string green = (dir / "green.json").string();
  REQUIRE(run_kvbench("run " + paths + " --filter valid_small --json " + green).status == 0);
  const auto none = run_kvbench("run " + paths + " --failed-from " + green);
  CHECK(none.status == 2);
  CHECK(none.output.find("lists no failed or invalid case") != std::string::npos);
  CHECK(run_kvbench("run " + paths + " --failed-from " + green + " --allow-empty").status == 0);

  // What is not a report is refused, naming it.
  std::ofstream(dir / "not_a_report.json") << R"({"cases": 3})";
  const auto bad = run_kvbench("run " + paths + " --failed-from " + (dir / "not_a_report.json").string());
  CHECK(bad.status == 2);
  CHECK(bad.output.find("not_a_report.json: not a kvbench run report") != std::string::npos);
  const auto missing = run_kvbench("run " + paths + " --failed-from " + (dir / "nothing.json").string());
  CHECK(missing.status == 2);
  CHECK(missing.output.find("--failed-from " + (dir / "nothing.json").string()) != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("run --failed-from: invalid cases run again by name, the passing cases of their files do not") {
  const fs::path dir = fs::temp_directory_path() / "kvbench_test_failed_from_invalid";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string report = (dir / "first.json").string();
  REQUIRE(run_kvbench("run " + source_path("tests/data/mixed") + " --json " + report).status == 2);
  const auto again = run_kvbench("run " + source_path("tests/data/mixed") + " --failed-from " + report);
  CHECK(again.status == 2);
  CHECK(again.output.find("bad_swept_group[quant_group=6]): quant_group must divide") != std::string::npos);
  CHECK(again.output.find("PASS  bad_swept_group[quant_group=8]") == std::string::npos);
  CHECK(again.output.find("PASS  valid_small") == std::string::npos);
  CHECK(again.output.find("0 passed, 0 failed, 0 skipped") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE(
    "--cases-from: only the cases named in the file; a name no case file has is an error naming its line") {
  const fs::path dir = fs::temp_directory_path() / "kvbench_test_cases_from";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string paths =
      source_path("tests/data/fail_fast") + " " + source_path("tests/data/mixed/valid.json");
  std::ofstream(dir / "one.txt") << "# a comment line\n\n  valid_small  # and a comment after the name\n";
  const auto one = run_kvbench("list " + paths + " --cases-from " + (dir / "one.txt").string());
  CHECK(one.status == 0);
  CHECK(one.output.find("valid_small  ") == 0);
  CHECK(one.output.find("\n1 cases\n") != std::string::npos);
  // A renamed or removed case must not silently leave the list.
  std::ofstream(dir / "stale.txt") << "valid_small\nno_such_case\n";
  const auto stale = run_kvbench("run " + paths + " --cases-from " + (dir / "stale.txt").string());
  CHECK(stale.status == 2);
  CHECK(stale.output.find("--cases-from " + (dir / "stale.txt").string() +
                          ":2: no case is named no_such_case") != std::string::npos);
  std::ofstream(dir / "twice.txt") << "valid_small\nvalid_small\n";
  CHECK(run_kvbench("list " + paths + " --cases-from " + (dir / "twice.txt").string())
            .output.find(":2: valid_small is named twice") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("list --pipelines: each case's pipelines on the device, nothing computed") {
  const auto r = run_kvbench("list " + source_path("tests/data/mixed/valid.json") + " --pipelines");
  REQUIRE(r.status == 0);
  CHECK(r.output.find("device: ") == 0);
  CHECK(r.output.find("valid_small  pipelines: ") != std::string::npos);
}
