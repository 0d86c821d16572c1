#include "cases/case_loader.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "cases/schema.hpp"

namespace kvbench {
namespace fs = std::filesystem;

std::string CaseFileError::to_string() const {
  std::string s = file;
  if (!pointer.empty()) s += ": " + pointer;
  if (!case_name.empty()) s += " (case " + case_name + ")";
  return s + ": " + message;
}

namespace {

const char* kSweepable[] = {"attributes", "shapes", "inputs", "dtypes"};

std::string param_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

LoadedCases expand_case_document(const nlohmann::json& doc, const std::string& file) {
  LoadedCases out;
  auto violations = validate_schema(doc, case_schema());
  if (!violations.empty()) {
    for (auto& v : violations) out.errors.push_back({file, v.pointer, v.message, ""});
    return out;
  }
  // Each sweep key names exactly one existing field, which gives it its section.
  std::vector<std::pair<std::string, std::string>> axes;  // (key, section)
  const nlohmann::json sweep = doc.value("sweep", nlohmann::json::object());
  for (auto it = sweep.begin(); it != sweep.end(); ++it) {
    std::vector<std::string> sections;
    for (const char* s : kSweepable)
      if (doc.contains(s) && doc[s].contains(it.key())) sections.push_back(s);
    if (sections.size() != 1) {
      out.errors.push_back({file, "/sweep/" + pointer_token(it.key()),
                            sections.empty()
                                ? "swept parameter '" + it.key() + "' must also be given a value in attributes, shapes, inputs or dtypes"
                                : "swept parameter '" + it.key() + "' is ambiguous: it appears in both " + sections[0] + " and " + sections[1],
                            ""});
      continue;
    }
    axes.emplace_back(it.key(), sections[0]);
  }
  if (!out.errors.empty()) return out;

  nlohmann::json base = doc;
  base.erase("sweep");
  std::vector<size_t> index(axes.size(), 0);
  for (;;) {
    CaseDef c;
    c.file = file;
    c.op = doc["op"].get<std::string>();
    c.seed = doc["seed"].get<uint64_t>();
    c.slow = doc.value("slow", false);
    c.body = base;
    c.name = doc["name"].get<std::string>();
    std::string suffix;
    for (size_t a = 0; a < axes.size(); ++a) {
      const auto& [key, section] = axes[a];
      const nlohmann::json& value = sweep[key][index[a]];
      c.body[section][key] = value;
      c.swept_from["/" + section + "/" + pointer_token(key)] =
          "/sweep/" + pointer_token(key) + "/" + std::to_string(index[a]);
      c.params.emplace_back(key, value);
      suffix += (suffix.empty() ? "" : ",") + key + "=" + param_text(value);
    }
    if (!suffix.empty()) c.name += "[" + suffix + "]";
    // A swept value must satisfy the schema like a written one; report it at its sweep entry.
    bool valid = true;
    if (!axes.empty())
      for (auto& v : validate_schema(c.body, case_schema())) {
        out.errors.push_back({file, c.locate(v.pointer), v.message, c.name});
        valid = false;
      }
    if (valid) out.cases.push_back(std::move(c));
    // Advance the odometer; the last axis varies fastest.
    size_t a = axes.size();
    while (a > 0) {
      --a;
      if (++index[a] < sweep[axes[a].first].size()) break;
      index[a] = 0;
      if (a == 0) return out;
    }
    if (axes.empty()) return out;
  }
}

LoadedCases load_case_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  LoadedCases out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file() && e.path().extension() == ".json") found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      out.errors.push_back({p, "", "no such file or folder", ""});
    }
  }
  std::set<std::string> names;
  for (const auto& f : files) {
    std::ifstream in(f);
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(in);
    } catch (const nlohmann::json::parse_error& e) {
      out.errors.push_back({f, "", std::string("invalid JSON: ") + e.what(), ""});
      continue;
    }
    LoadedCases one;
    try {
      one = expand_case_document(doc, f);
    } catch (const std::exception& e) {  // nothing in one file may end the run
      out.errors.push_back({f, "", std::string("the case file could not be expanded: ") + e.what(), ""});
      continue;
    }
    out.errors.insert(out.errors.end(), one.errors.begin(), one.errors.end());
    for (auto& c : one.cases) {
      if (!names.insert(c.name).second) {
        out.errors.push_back({f, "/name", "case name '" + c.name + "' is already used by another case file", c.name});
        continue;
      }
      out.cases.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace kvbench
