#include "cases/case_loader.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>

#include "cases/schema.hpp"
#include "core/file_io.hpp"
#include "core/json_text.hpp"

namespace kvbench {
namespace fs = std::filesystem;

namespace {

const char* kSweepable[] = {"attributes", "shapes", "inputs", "dtypes"};

std::string param_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

LoadedCases expand_case_document(const nlohmann::json& doc, const std::string& file,
                                 const RunOptions& options) {
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
                                ? "swept parameter '" + it.key() +
                                      "' must also be given a value in attributes, shapes, inputs or dtypes"
                                : "swept parameter '" + it.key() + "' is ambiguous: it appears in both " +
                                      sections[0] + " and " + sections[1],
                            ""});
      continue;
    }
    axes.emplace_back(it.key(), sections[0]);
  }
  if (!out.errors.empty()) return out;

  // The product of the sweep's lengths, checked before anything is expanded.
  uint64_t expansions = 1;
  for (const auto& [key, section] : axes) {
    const uint64_t n = sweep[key].size();
    if (expansions > options.max_cases_per_file / n) {
      out.errors.push_back({file, "/sweep",
                            "the sweep expands to more than " + std::to_string(options.max_cases_per_file) +
                                " cases (--max-cases raises the limit)",
                            ""});
      return out;
    }
    expansions *= n;
  }
  // The seed is a 64-bit key: an integer written as a float (1e19) must fit it too.
  const nlohmann::json& seed_value = doc["seed"];
  uint64_t seed = 0;
  if (seed_value.is_number_float()) {
    const double x = seed_value.get<double>();
    if (!(x >= 0 && x < 18446744073709551616.0)) {
      out.errors.push_back({file, "/seed", "seed must be an integer in [0, 2^64)", ""});
      return out;
    }
    seed = static_cast<uint64_t>(x);
  } else {
    seed = seed_value.get<uint64_t>();
  }
  nlohmann::json base = doc;
  base.erase("sweep");
  std::vector<size_t> index(axes.size(), 0);
  for (;;) {
    CaseDef c;
    c.file = file;
    c.op = doc["op"].get<std::string>();
    c.seed = seed;
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

namespace {

// Bounds on what one case file may ask of the parser (specs/case-format.md "Limits").
constexpr uintmax_t kMaxFileBytes = 16u << 20;
constexpr int kMaxDepth = 64;

// Whatever a path names besides a folder or a regular file ("a FIFO", "a device"), and
// the system's reason when it cannot be looked at (a link loop, no permission), or "".
std::string not_a_case_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::string("cannot read the file: ") + std::strerror(errno);
  if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) return "";
  return std::string("not a regular file or folder (") + file_kind(st.st_mode) + ")";
}

// The .json files under `dir`, sorted; errors (loops, unreadable folders, entries named
// *.json that are not regular files) as reports: nothing is skipped in silence.
void find_case_files(const std::string& dir, std::vector<std::string>& files,
                     std::vector<CaseFileError>& errors) {
  std::vector<std::string> found;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".json") continue;
    const std::string path = it->path().string();
    if (const std::string problem = not_a_case_file(path); !problem.empty())
      errors.push_back({path, "", problem, ""});
    else if (!fs::is_directory(path, ec))
      found.push_back(path);  // a folder named *.json is searched, not read
    ec.clear();
  }
  if (ec) errors.push_back({dir, "", "cannot read the folder completely: " + ec.message(), ""});
  std::sort(found.begin(), found.end());
  files.insert(files.end(), found.begin(), found.end());
}

// The file's text, or an error report for the file. Opened once (a FIFO is refused without
// blocking), read to its end within the limit whatever size it claims (/proc files).
std::optional<std::string> read_case_file(const std::string& f, std::vector<CaseFileError>& errors) {
  try {
    const RegularFile file(f);
    if (file.size() > kMaxFileBytes) {
      errors.push_back({f, "",
                        "the file is " + std::to_string(file.size()) + " bytes; case files are limited to " +
                            std::to_string(kMaxFileBytes) + " bytes",
                        ""});
      return std::nullopt;
    }
    return file.read_all(kMaxFileBytes);
  } catch (const FileError& e) {
    errors.push_back(
        {f, "", "cannot read the file: " + (e.reason().empty() ? std::string(e.what()) : e.reason()), ""});
    return std::nullopt;
  }
}

}  // namespace

LoadedCases load_case_text(const std::string& text, const std::string& file, const RunOptions& options) {
  LoadedCases out;
  nlohmann::json doc;
  try {
    doc = parse_json_text(text, kMaxDepth);
  } catch (const JsonTextError& e) {  // syntax, numbers out of range (1e400), nesting: with line and column
    out.errors.push_back({file, "", std::string("invalid JSON: ") + e.what(), ""});
    return out;
  }
  try {
    return expand_case_document(doc, file, options);
  } catch (const std::exception& e) {  // nothing in one file may end the run
    out.errors.push_back({file, "", std::string("the case file could not be expanded: ") + e.what(), ""});
    return out;
  }
}

LoadedCases load_case_paths(const std::vector<std::string>& paths, const RunOptions& options) {
  std::vector<std::string> files;
  LoadedCases out;
  std::set<std::string> seen;  // canonical paths: one file reached twice is read once
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      find_case_files(p, files, out.errors);
    } else if (!fs::exists(fs::symlink_status(p, ec))) {
      out.errors.push_back({p, "", "no such file or folder", ""});
    } else if (const std::string problem = not_a_case_file(p); !problem.empty()) {
      out.errors.push_back({p, "", problem, ""});  // a FIFO, a device, a link loop, no permission to look
    } else {
      files.push_back(p);
    }
  }
  std::set<std::string> names;
  for (const auto& f : files) {
    std::error_code ec;
    const std::string canonical = fs::weakly_canonical(f, ec).string();
    if (!ec && !seen.insert(canonical).second) continue;
    const std::optional<std::string> text = read_case_file(f, out.errors);
    if (!text) continue;
    const LoadedCases one = load_case_text(*text, f, options);
    out.errors.insert(out.errors.end(), one.errors.begin(), one.errors.end());
    for (const auto& c : one.cases) {
      if (!names.insert(c.name).second) {
        out.errors.push_back(
            {f, "/name", "case name '" + c.name + "' is already used by another case file", c.name});
        continue;
      }
      out.cases.push_back(c);
    }
  }
  return out;
}

}  // namespace kvbench
