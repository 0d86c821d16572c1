// The terminal report as a person reads it: whole case names (wrapped on a terminal), the
// details of a failing row, err/scale on a pass, and the closing list of failed cases.
#include <doctest/doctest.h>

#include <regex>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "check/compare.hpp"
#include "core/float_format.hpp"
#include "cli_runner.hpp"
#include "report/name_column.hpp"
#include "report/text_report.hpp"

using namespace kvbench;

namespace {

// A 106-character name, of cases/pmx.KeyValueCache/quantized.json.
const std::string kLongName =
    "kvc_quant[cache_layout=0,current_key=f16,layer_idx=0,num_repeat=1,quant_bit=8,quant_group=8,start_pos="
    "0]";
const std::string kLongFilter =
    "--filter '^kvc_quant\\[cache_layout=0,current_key=f16,layer_idx=0,num_repeat=1,"
    "quant_bit=8,quant_group=(8|32),start_pos=0\\]$'";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// What a terminal shows of one line: the text after the last carriage return, without
// the erase-line sequence.
std::string shown(std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();  // the terminal's CR LF
  if (const auto cr = line.find_last_of('\r'); cr != std::string::npos) line = line.substr(cr + 1);
  for (size_t p; (p = line.find("\x1b[K")) != std::string::npos;) line.erase(p, 3);
  return line;
}

}  // namespace

TEST_CASE("wrap_name: pieces fit the room, end after ',' or '[' where they can, and join to the name") {
  const auto pieces = wrap_name(kLongName, 40);
  std::string joined;
  for (const auto& p : pieces) {
    CHECK(p.size() <= 40);
    joined += p;
  }
  CHECK(joined == kLongName);
  REQUIRE(pieces.size() == 4);
  CHECK(pieces[0] == "kvc_quant[cache_layout=0,");
  CHECK(pieces[2] == "num_repeat=1,quant_bit=8,quant_group=8,");
  CHECK(wrap_name(std::string(25, 'a'), 10) == std::vector<std::string>{"aaaaaaaaaa", "aaaaaaaaaa", "aaaaa"});
}

TEST_CASE("name column: whole names in a log, the terminal's width on a terminal") {
  const std::vector<std::string> names{"short", kLongName};
  const NameColumn log = name_column(names, 12, 63, std::nullopt);
  CHECK(log.width == kLongName.size());
  CHECK(log.cell(kLongName) == kLongName);
  const NameColumn narrow = name_column(names, 12, 63, 100);
  CHECK(narrow.width == 25);
  const std::string cell = narrow.cell(kLongName);
  CHECK(cell.find("...") == std::string::npos);
  for (const auto& line : lines_of(cell)) CHECK(12 + line.size() <= 100);
  // The figures go on the line after the name, under their headers.
  CHECK(cell.substr(cell.rfind('\n')) == "\n" + std::string(12 + 25, ' '));
  // Names past kLogNameWidth get a line of their own in a log too, whole.
  const std::string huge(200, 'n');
  const NameColumn wide = name_column({huge}, 12, 63, std::nullopt);
  CHECK(wide.width == kLogNameWidth);
  CHECK(wide.cell(huge).substr(0, 201) == huge + "\n");
}

TEST_CASE("run in a log: full case names, one row each") {
  const auto r =
      run_kvbench("run " + source_path("cases/pmx.KeyValueCache/quantized.json") + " " + kLongFilter);
  CHECK(r.status == 0);
  CHECK(r.output.find("    1 PASS  " + kLongName + "  ") != std::string::npos);
  CHECK(r.output.find("...") == std::string::npos);
}

TEST_CASE("run on a terminal: every line within its width, names wrapped whole") {
  if (std::system("command -v script > /dev/null") != 0) return;  // util-linux's script gives a terminal
  const std::string cmd = "stty cols 100; " + std::string(KVBENCH_BINARY) + " run " +
                          source_path("cases/pmx.KeyValueCache/quantized.json") + " " + kLongFilter;
  std::string quoted = "'";
  for (char c : cmd) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  const auto r = run_command("script -qec " + quoted + "' /dev/null");
  std::string names;
  for (const auto& raw : lines_of(r.output)) {
    const std::string line = shown(raw);
    CHECK(line.size() <= 100);
    if (line.find("PASS  kvc_quant") != std::string::npos || line.rfind("            quant", 0) == 0)
      names += line;
  }
  CHECK(r.output.find("2 passed, 0 failed, 0 skipped") != std::string::npos);
  CHECK(names.find("cache_layout=0,current_key=f16,") != std::string::npos);
  CHECK(names.find("quant_group=32,start_pos=0]") != std::string::npos);
}

TEST_CASE(
    "a failing row names the tolerance, the worst element's errors and NaN/Inf mismatches; a closing list") {
  // The golden's tolerance is tightened below the kernel's rounding: every case fails.
  const auto r = run_kvbench("run " + source_path("tests/data/fail_fast"));
  CHECK(r.status == 1);
  // The counts and the worst element depend on the kernel's rounding; the line's form and
  // its arithmetic do not: abs err = |actual - golden|, rel err = abs err / |golden|.
  std::smatch m;
  const std::regex count_line(
      R"(attn_output: (\d+) of 768 elements out of tolerance \|a-g\| <= atol 1e-12 \+ rtol 0 \* )"
      R"(\|golden\|; 0 NaN/Inf mismatches)");
  REQUIRE(std::regex_search(r.output, m, count_line));
  CHECK(std::stoi(m[1]) >= 1);
  CHECK(std::stoi(m[1]) <= 768);
  const std::string num = R"(([-+0-9.e]+))";
  const std::regex worst_line(R"(worst: attn_output\[[0-2],[0-3],\d+\] = )" + num + ", golden " + num +
                              ": abs err " + num + ", rel err " + num + " > allowed 1e-12");
  REQUIRE(std::regex_search(r.output, m, worst_line));
  const double actual = std::stod(m[1]), golden = std::stod(m[2]), abs_err = std::stod(m[3]),
               rel_err = std::stod(m[4]);
  CHECK(abs_err > 0);
  CHECK(std::fabs(abs_err - std::fabs(actual - golden)) <= 2e-9);  // actual and golden are shown to 9 digits
  CHECK(rel_err == doctest::Approx(abs_err / std::fabs(golden)).epsilon(0.01));
  const auto summary = r.output.find("0 passed, 3 failed, 0 skipped\nfailed cases:\n");
  REQUIRE(summary != std::string::npos);
  const std::string closing = r.output.substr(summary);
  for (int layer = 1; layer <= 3; ++layer) {
    const std::string name = "fail_fast_tight[num_layer=" + std::to_string(layer) + "]";
    CHECK(closing.find("\n  " + name + "\n      repro: ") != std::string::npos);
    CHECK(closing.find("--filter '^fail_fast_tight\\[num_layer=" + std::to_string(layer) + "\\]$'") !=
          std::string::npos);
  }
}

TEST_CASE("a pass against a golden near zero: err/scale stays small where max_rel does not") {
  Tensor like("out", DType::f32, {2}, Role::output);
  Expected e = Expected::output(like, {round_f32(1e-9), 1.0}, {1e-9, 1.0});
  e.tolerance.atol = 1e-6;
  Tensor a("out", DType::f32, {2}, Role::output);
  a.set(0, 3e-9);
  a.set(1, 1.0);
  const Metrics m = compare_output(e, a, a);
  CHECK(m.passed());
  CHECK(m.max_rel > 1);  // |3e-9 - 1e-9| / 1e-9
  CHECK(m.scale == 1.0);
  CHECK(m.err_over_scale() == doctest::Approx(2e-9).epsilon(1e-3));
  CaseResult r{.name = "near_zero", .status = Status::pass};
  r.outputs.push_back({m, e.tolerance, {2}});
  const NameColumn c = name_column({"near_zero"}, kRowIndent, kRowFiguresWidth, std::nullopt);
  CHECK(report_header(c).find("err/scale") != std::string::npos);
  const std::string row = report_row(r, c);
  CHECK(row.find("   2e-09 ") != std::string::npos);
  CHECK(row.find(" 2 ") == std::string::npos);  // not the max_rel of 2
}

TEST_CASE("check on a missing actual file says so, with no figures of a comparison that did not happen") {
  const auto dir = std::filesystem::temp_directory_path() / "kvbench_test_missing_actual";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "actual");
  const std::string junit = (dir / "check.xml").string();
  const auto r = run_kvbench("check --golden " + source_path("tests/data/bad_golden/base/golden") +
                             " --actual " + (dir / "actual").string() + " --junit " + junit);
  CHECK(r.status == 1);
  CHECK(r.output.find("FAIL  tiny  no actual output file " +
                      (dir / "actual" / "tiny.safetensors").string()) != std::string::npos);
  std::ifstream in(junit);
  const std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(xml.find("no actual output file") != std::string::npos);
  CHECK(xml.find("max_abs=") == std::string::npos);
  CHECK(xml.find("violations=0") == std::string::npos);
  std::filesystem::remove_all(dir);
}
