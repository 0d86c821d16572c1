// Case files: schema validation with JSON pointers, sweep expansion, and loading folders
// (src/cases/case_loader.hpp, src/cases/schema.hpp).
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cases/case_loader.hpp"

using namespace kvbench;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

json minimal() { return json{{"op", "pmx.KeyValueCache"}, {"name", "c"}, {"seed", 1}}; }

// The single error pointer of an invalid document (and that it produced no cases).
std::string only_error(const json& doc) {
  const LoadedCases r = expand_case_document(doc, "case.json", {});
  CHECK(r.cases.empty());
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].file == "case.json");
  return r.errors[0].pointer;
}

// A fresh, empty folder under the system temp folder, removed at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    path = fs::temp_directory_path() / ("kvbench_test_cases_" + std::to_string(stamp));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  void write(const std::string& name, const std::string& text) const { std::ofstream(path / name) << text; }
};

}  // namespace

TEST_CASE("case loader: a 2x3 sweep expands to 6 named cases, last key fastest") {
  json doc = minimal();
  doc["name"] = "sw";
  doc["attributes"] = {{"a", 0}, {"other", 5}};
  doc["dtypes"] = {{"b", "f16"}};
  doc["sweep"] = {{"b", {"f16", "bf16", "f32"}}, {"a", {1, 2}}};
  const LoadedCases r = expand_case_document(doc, "sw.json", {});
  REQUIRE(r.errors.empty());
  REQUIRE(r.cases.size() == 6);
  const std::vector<std::string> names = {"sw[a=1,b=f16]", "sw[a=1,b=bf16]", "sw[a=1,b=f32]",
                                          "sw[a=2,b=f16]", "sw[a=2,b=bf16]", "sw[a=2,b=f32]"};
  for (size_t i = 0; i < 6; ++i) {
    CHECK(r.cases[i].name == names[i]);
    CHECK(r.cases[i].file == "sw.json");
    CHECK(r.cases[i].op == "pmx.KeyValueCache");
    CHECK(r.cases[i].seed == 1);
  }
  // The limit is the caller's (--max-cases), for this load only: nothing process-wide.
  const LoadedCases limited = expand_case_document(doc, "sw.json", {.max_cases_per_file = 5});
  CHECK(limited.cases.empty());
  REQUIRE(limited.errors.size() == 1);
  CHECK(limited.errors[0].message.find("expands to more than 5 cases") != std::string::npos);
  CHECK(expand_case_document(doc, "sw.json", {}).cases.size() == 6);
  // The swept values land in the body; the sweep itself is gone; other fields stay.
  const CaseDef& c4 = r.cases[4];
  CHECK(c4.body["attributes"]["a"] == 2);
  CHECK(c4.body["dtypes"]["b"] == "bf16");
  CHECK(c4.body["attributes"]["other"] == 5);
  CHECK_FALSE(c4.body.contains("sweep"));
  REQUIRE(c4.params.size() == 2);
  CHECK(c4.params[0].first == "a");
  CHECK(c4.params[1].first == "b");
  // Errors about a swept field point at the value the author wrote in the sweep.
  CHECK(r.cases[1].locate("/attributes/a") == "/sweep/a/0");
  CHECK(r.cases[1].locate("/dtypes/b") == "/sweep/b/1");
  CHECK(r.cases[3].locate("/attributes/a") == "/sweep/a/1");
  CHECK(r.cases[3].locate("/dtypes/b") == "/sweep/b/0");
  CHECK(r.cases[1].locate("/attributes/other") == "/attributes/other");
}

TEST_CASE("case loader: a document without a sweep is one case with its plain name") {
  const LoadedCases r = expand_case_document(minimal(), "c.json", {});
  REQUIRE(r.errors.empty());
  REQUIRE(r.cases.size() == 1);
  CHECK(r.cases[0].name == "c");
}

TEST_CASE("schema errors name the JSON pointer at fault") {
  SUBCASE("missing seed") {
    json d = minimal();
    d.erase("seed");
    CHECK(only_error(d) == "/seed");
  }
  SUBCASE("unknown top-level field") {
    json d = minimal();
    d["foo"] = 1;
    CHECK(only_error(d) == "/foo");
  }
  SUBCASE("negative seed") {
    json d = minimal();
    d["seed"] = -1;
    CHECK(only_error(d) == "/seed");
  }
  SUBCASE("a shape that is not an integer") {
    json d = minimal();
    d["shapes"] = {{"dim", "x"}};
    CHECK(only_error(d) == "/shapes/dim");
  }
  SUBCASE("a tolerance override without a reason") {
    json d = minimal();
    d["tolerance"] = {{"key", {{"atol", 0.1}}}};
    CHECK(only_error(d) == "/tolerance/key/reason");
  }
  SUBCASE("a sweep key that is in no section") {
    json d = minimal();
    d["sweep"] = {{"key", {1, 2}}};
    CHECK(only_error(d) == "/sweep/key");
  }
  SUBCASE("a sweep key that is in two sections") {
    json d = minimal();
    d["attributes"] = {{"key", 1}};
    d["shapes"] = {{"key", 2}};
    d["sweep"] = {{"key", {1, 2}}};
    CHECK(only_error(d) == "/sweep/key");
  }
  SUBCASE("an empty sweep list") {
    json d = minimal();
    d["attributes"] = {{"key", 1}};
    d["sweep"] = {{"key", json::array()}};
    CHECK(only_error(d) == "/sweep/key");
  }
}

TEST_CASE("load_case_paths: a bad file is reported by name and the good one still loads") {
  TempDir dir;
  dir.write("good.json", R"({"op": "pmx.KeyValueCache", "name": "good", "seed": 3})");
  dir.write("bad.json", R"({"op": "pmx.KeyValueCache", "name": )");
  dir.write("notes.txt", "not a case file");
  const LoadedCases r = load_case_paths({dir.path.string()}, {});
  REQUIRE(r.cases.size() == 1);
  CHECK(r.cases[0].name == "good");
  CHECK(r.cases[0].seed == 3);
  REQUIRE(r.errors.size() == 1);
  CHECK(fs::path(r.errors[0].file).filename() == "bad.json");
  CHECK(r.errors[0].to_string().find("bad.json") != std::string::npos);
}

TEST_CASE("load_case_paths: a case name used by two files is an error") {
  TempDir dir;
  dir.write("a.json", R"({"op": "pmx.KeyValueCache", "name": "dup", "seed": 1})");
  dir.write("b.json", R"({"op": "pmx.KeyValueCache", "name": "dup", "seed": 2})");
  const LoadedCases r = load_case_paths({dir.path.string()}, {});
  REQUIRE(r.cases.size() == 1);
  CHECK(r.cases[0].seed == 1);  // files are read in sorted order: a.json wins
  REQUIRE(r.errors.size() == 1);
  CHECK(fs::path(r.errors[0].file).filename() == "b.json");
  CHECK(r.errors[0].pointer == "/name");
}

TEST_CASE("load_case_paths: a path that does not exist is an error, not a crash") {
  const LoadedCases r =
      load_case_paths({(fs::temp_directory_path() / "kvbench_no_such_case_dir_xyz").string()}, {});
  CHECK(r.cases.empty());
  CHECK(r.errors.size() == 1);
}

TEST_CASE(
    "case loader: a swept value that breaks the schema is rejected at its sweep entry, the rest expand") {
  json doc = minimal();
  doc["name"] = "neg";
  doc["shapes"] = {{"dim", 1}};
  doc["sweep"] = {{"dim", {1, -1, 2}}};
  const LoadedCases r = expand_case_document(doc, "neg.json", {});
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].pointer == "/sweep/dim/1");
  CHECK(r.errors[0].case_name == "neg[dim=-1]");
  REQUIRE(r.cases.size() == 2);
  CHECK(r.cases[0].name == "neg[dim=1]");
  CHECK(r.cases[1].name == "neg[dim=2]");
}
