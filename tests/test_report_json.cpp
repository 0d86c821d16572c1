// The JSON reports as a tool reads them: every number a JSON number (null where it is not
// finite, with its text beside), each case's resolved parameters, and the documented
// format (specs/report.schema.json, specs/bench-report.schema.json) holding for real reports.
#include <doctest/doctest.h>

#include <cmath>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "cases/schema.hpp"
#include "cli_runner.hpp"
#include "report/json_report.hpp"
#include "report/run_reporter.hpp"

using namespace kvbench;
namespace fs = std::filesystem;

namespace {

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// Every schema violation, one per line ("" when there is none).
std::string violations(const nlohmann::json& doc, const std::string& schema_file) {
  std::string out;
  for (const auto& v : validate_schema(doc, read_json(source_path(schema_file))))
    out += v.pointer + ": " + v.message + "\n";
  return out;
}

// Every string value that stands for a number ("nan", "1.57x", "0.25") outside a figure's
// "text"/"unit" and the *_text fields: none may be left.
void find_numeric_strings(const nlohmann::json& j, const std::string& ptr, std::vector<std::string>& found) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& k = it.key();
      if (k == "text" || k == "unit" || k == "resolved" ||
          (k.size() > 5 && k.substr(k.size() - 5) == "_text"))
        continue;
      find_numeric_strings(it.value(), ptr + "/" + k, found);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) find_numeric_strings(j[i], ptr + "/" + std::to_string(i), found);
  } else if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "nan" || s == "inf" || s == "-inf" ||
        (!s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])))))
      if (ptr.find("/kvbench_version") == std::string::npos) found.push_back(ptr + " = " + s);
  }
}

}  // namespace

TEST_CASE("figure_json: an operator's figure text becomes numbers beside the text") {
  CHECK(figure_json("1.57x") == nlohmann::json{{"text", "1.57x"}, {"value", 1.57}, {"unit", "x"}});
  CHECK(figure_json("11.4 KiB") == nlohmann::json{{"text", "11.4 KiB"}, {"value", 11.4}, {"unit", "KiB"}});
  CHECK(figure_json("161/252 token rows") ==
        nlohmann::json{{"text", "161/252 token rows"}, {"value", 161}, {"of", 252}, {"unit", "token rows"}});
  CHECK(figure_json("max_abs 0.0012, rel_l2 3e-04") ==
        nlohmann::json{{"text", "max_abs 0.0012, rel_l2 3e-04"}, {"max_abs", 0.0012}, {"rel_l2", 3e-4}});
  const nlohmann::json nan = figure_json("max_abs nan, rel_l2 inf");
  CHECK(nan["max_abs"].is_null());
  CHECK(nan["max_abs_text"] == "nan");
  CHECK(nan["rel_l2_text"] == "inf");
  CHECK(figure_json("see the log") == nlohmann::json{{"text", "see the log"}});
}

TEST_CASE("run --json: numbers as numbers, resolved parameters, and the documented format") {
  const fs::path dir = fs::temp_directory_path() / "kvbench_test_report_json";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string cases = source_path("tests/data/oversize") + " " + source_path("tests/data/fail_fast") +
                            " " + source_path("tests/data/mixed/malformed.json") + " " +
                            source_path("cases/dnnl.SDPACompressedKV/masked_rows.json") + " " +
                            source_path("cases/atb.ReshapeAndCacheOmni/decisions.json");
  const auto r = run_kvbench("run " + cases +
                             " --memory-budget 1T --filter '^(kvc|fail_fast|omni_decisions\\[key=f16|"
                             "sdpa_masked_rows\\[causal=none,query=f16)' --json " +
                             (dir / "r.json").string());
  CHECK(r.status == 2);  // the malformed file
  const nlohmann::json j = read_json(dir / "r.json");
  CHECK(violations(j, "specs/report.schema.json") == "");
  std::vector<std::string> numeric;
  find_numeric_strings(j, "", numeric);
  CHECK(numeric == std::vector<std::string>{});
  CHECK(j["invalid"][0]["file"].get<std::string>().find("malformed.json") != std::string::npos);
  int seen = 0;
  for (const auto& c : j["cases"]) {
    CHECK(c["resolved"].contains("shapes"));
    CHECK(c["resolved"].contains("dtypes"));
    const std::string name = c["name"];
    if (name == "omni_decisions[key=f16]") {
      CHECK(c["figures"]["ratio"]["value"].is_number());
      CHECK(c["figures"]["ratio"]["unit"] == "x");
      CHECK(c["figures"]["stored"]["of"].is_number());
      ++seen;
    }
    if (name.rfind("sdpa_masked_rows", 0) == 0) {
      CHECK(c["figures"]["quant_err"]["max_abs"].is_number());
      CHECK(c["figures"]["quant_err"]["rel_l2"].is_number());
      CHECK(c["resolved"]["attributes"].contains("group_size"));
      ++seen;
    }
    if (name == "fail_fast_tight[num_layer=1]") {
      const auto& out = c["outputs"][0];
      // The worst element is the largest error (every element violates atol 1e-12), and
      // its multi-index and flat index name the same element of the [3, 4, 64] output.
      const auto& worst = out["worst"];
      REQUIRE(worst["index"].size() == 3);
      const int64_t i0 = worst["index"][0], i1 = worst["index"][1], i2 = worst["index"][2];
      CHECK(out["shape"] == nlohmann::json::array({3, 4, 64}));
      CHECK(worst["flat_index"] == (i0 * 4 + i1) * 64 + i2);
      CHECK(std::fabs(worst["actual"].get<double>() - worst["golden"].get<double>()) ==
            out["max_abs"].get<double>());
      CHECK(out["max_abs"].get<double>() > 0);
      CHECK(out["scale"].is_number());
      CHECK(out["err_over_scale"].is_number());
      // The cache's worst element is NaN against a NaN golden outside the written region.
      CHECK(c["outputs"][1]["worst"]["actual"].is_null());
      CHECK(c["outputs"][1]["worst"]["actual_text"] == "nan");
      ++seen;
    }
    if (name == "kvc_8gb_cache") {
      CHECK(c["status"] == "SKIP");
      CHECK(c["resolved"]["shapes"]["max_seqlen"] == 1024);
      ++seen;
    }
  }
  CHECK(seen == 4);
  fs::remove_all(dir);
}

TEST_CASE("check --json and bench --json: resolved parameters and the documented format") {
  const fs::path dir = fs::temp_directory_path() / "kvbench_test_report_json_check";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string golden = source_path("tests/data/bad_golden/base/golden");
  const auto c =
      run_kvbench("check --golden " + golden + " --actual " +
                  source_path("tests/data/bad_golden/base/actual") + " --json " + (dir / "c.json").string());
  CHECK(c.status == 0);
  const nlohmann::json cj = read_json(dir / "c.json");
  CHECK(violations(cj, "specs/report.schema.json") == "");
  CHECK(cj["device"].is_null());
  CHECK(cj["cases"][0]["resolved"]["attributes"].is_object());
  CHECK(cj["cases"][0]["resolved"]["dtypes"].is_object());

  const auto b = run_kvbench("bench " + source_path("tests/data/mixed/valid.json") +
                             " --warmup 0 --reps 2 --json " + (dir / "b.json").string());
  CHECK(b.status == 0);
  const nlohmann::json bj = read_json(dir / "b.json");
  CHECK(violations(bj, "specs/bench-report.schema.json") == "");
  CHECK(bj["cases"][0]["gbps"].is_number());
  CHECK(bj["cases"][0]["resolved"]["shapes"]["head_dim"] == 16);
  // The schema itself is not vacuous: a string where a number belongs is caught.
  nlohmann::json broken = bj;
  broken["cases"][0]["gbps"] = "1.5";
  CHECK(violations(broken, "specs/bench-report.schema.json") != "");
  nlohmann::json unclocked = bj;  // the clock figure is never left out, even where it is unknown
  unclocked["cases"][0]["timing"].erase("shader_clock_mhz");
  CHECK(violations(unclocked, "specs/bench-report.schema.json") != "");
  fs::remove_all(dir);
}

TEST_CASE("a run's reports: incomplete from the start, replaced by the final ones") {
  const fs::path dir = fs::temp_directory_path() / "kvbench_test_report_incomplete";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const ReportFiles files{(dir / "r.json").string(), (dir / "r.xml").string()};
  RunReporter reporter({"a", "b"}, {}, files);
  REQUIRE(reporter.open_reports());
  const nlohmann::json incomplete = read_json(files.json);
  CHECK(violations(incomplete, "specs/report.schema.json") == "");
  CHECK(incomplete["complete"] == false);
  CHECK(incomplete["summary"]["selected"] == 2);
  std::ifstream xml(files.junit);
  const std::string junit((std::istreambuf_iterator<char>(xml)), std::istreambuf_iterator<char>());
  CHECK(junit.find("<error message=\"the kvbench run did not finish") != std::string::npos);
  reporter.finish(nullptr);
  CHECK(read_json(files.json)["complete"] == true);
  // Nothing else in the folder: the temporaries were renamed.
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 2);
  fs::remove_all(dir);
}
