#include "golden/manifest.hpp"

#include <cmath>
#include <filesystem>

#include "cases/schema.hpp"
#include "core/file_io.hpp"
#include "core/json_text.hpp"
#include "golden/checksum.hpp"

namespace kvbench {
namespace {

using nlohmann::json;

const json& require(const json& obj, const std::string& at, const std::string& key) {
  auto it = obj.find(key);
  if (it == obj.end()) throw ManifestError(at + "/" + key, "required field is missing");
  return *it;
}

std::string text(const json& obj, const std::string& at, const std::string& key) {
  const json& v = require(obj, at, key);
  if (!v.is_string())
    throw ManifestError(at + "/" + key, "must be a string, not " + std::string(v.type_name()));
  return v.get<std::string>();
}

std::string optional_text(const json& obj, const std::string& at, const std::string& key) {
  return obj.contains(key) ? text(obj, at, key) : "";
}

// An optional field that names a tensor: absent, or a name ("" would read as absent and
// silently change how the output is judged: a "bound": "" drops the bound).
std::string optional_tensor(const json& obj, const std::string& at, const std::string& key) {
  std::string name = optional_text(obj, at, key);
  if (obj.contains(key) && name.empty())
    throw ManifestError(at + "/" + key, "must name a tensor, not be empty (leave the field out for none)");
  return name;
}

double tolerance_value(const json& obj, const std::string& at, const std::string& key) {
  const json& v = require(obj, at, key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
    throw ManifestError(at + "/" + key, "must be a finite number >= 0, not " + v.dump());
  return v.get<double>();
}

Shape shape_of(const json& obj, const std::string& at) {
  const json& v = require(obj, at, "shape");
  const std::string where = at + "/shape";
  if (!v.is_array()) throw ManifestError(where, "must be an array of sizes");
  Shape shape;
  uint64_t numel = 1;
  for (const auto& d : v) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      throw ManifestError(where, "must be an array of sizes, not " + v.dump());
    const auto n = d.get<uint64_t>();
    if (n != 0 && numel > kMaxGoldenElements / n)
      throw ManifestError(where, "more than 2^48 elements: " + v.dump());
    numel *= n;
    shape.push_back(static_cast<int64_t>(n));
  }
  return shape;
}

}  // namespace

json read_manifest_json(const std::string& path) {
  std::string content;
  try {
    content = read_text_file(path, kMaxManifestBytes);
  } catch (const FileError& e) {
    // The report names the file already.
    std::string what = e.what();
    if (what.rfind(path + ": ", 0) == 0) what.erase(0, path.size() + 2);
    throw ManifestError("", what);
  }
  try {
    return parse_json_text(content, kMaxManifestDepth);
  } catch (const JsonTextError& e) {
    throw ManifestError("", std::string("invalid JSON: ") + e.what());
  }
}

bool looks_like_manifest(const json& doc) {
  return doc.is_object() && (doc.contains("case_hash") || doc.contains("outputs"));
}

GoldenManifest parse_manifest(const json& doc, const std::string& path) {
  if (!doc.is_object()) throw ManifestError("", "a manifest must be a JSON object");
  GoldenManifest m;
  m.path = path;
  if (doc.contains("format")) {
    const json& f = doc["format"];
    if (!f.is_number_integer() || f.get<int64_t>() < 1 || f.get<int64_t>() > kReadableGoldenFormat)
      throw ManifestError(
          "/format", "golden format " + f.dump() + " is not one this kvbench reads (1 to " +
                         std::to_string(kReadableGoldenFormat) +
                         "): write the golden again with this kvbench, or use the kvbench that wrote it");
    m.format = static_cast<int>(f.get<int64_t>());
  }
  m.name = text(doc, "", "case");
  m.op = text(doc, "", "op");
  m.source = doc.contains("source") ? text(doc, "", "source") : path;
  // The parameters the case ran with, for the reports (objects only: they are not checked further).
  m.resolved = json::object();
  for (const char* section : {"attributes", "shapes", "inputs", "dtypes"})
    if (doc.contains(section) && doc[section].is_object()) m.resolved[section] = doc[section];
  const std::string file = text(doc, "", "safetensors");
  if (file.empty() || file == "." || file == ".." || file.find('/') != std::string::npos)
    throw ManifestError("/safetensors", "must be a file name beside the manifest, not '" + file + "'");
  m.safetensors = (std::filesystem::path(path).parent_path() / file).string();

  // Checksums are verified whatever the format field says: a manifest that records them
  // but claims format 1 (no "format") or 2 would otherwise be read unverified, so a
  // tampered or rewritten format-3/4 golden could turn verification off by dropping one
  // field. Refused rather than guessed (specs/golden-format.md "What a reader refuses").
  if (m.format < 3 && doc.contains("checksums"))
    throw ManifestError(
        "/format",
        "the manifest records checksums, which only golden format 3 and later have, "
        "but its format is " +
            (doc.contains("format") ? doc["format"].dump() : std::string("missing (format 1)")) +
            ": refused rather than read unverified");
  if (m.format >= 3) {  // every tensor's checksum, checked against the data by verify_golden_data
    const json& sums = require(doc, "", "checksums");
    if (!sums.is_object()) throw ManifestError("/checksums", "must be an object");
    if (text(sums, "/checksums", "algorithm") != kChecksumAlgorithm)
      throw ManifestError("/checksums/algorithm", "must be \"" + std::string(kChecksumAlgorithm) +
                                                      "\", not " + sums["algorithm"].dump());
    const json& by_name = require(sums, "/checksums", "tensors");
    if (!by_name.is_object() || by_name.empty())
      throw ManifestError("/checksums/tensors", "must be a non-empty object");
    for (auto it = by_name.begin(); it != by_name.end(); ++it) {
      if (!it.value().is_string() || !is_checksum_text(it.value().get<std::string>()))
        throw ManifestError("/checksums/tensors/" + pointer_token(it.key()),
                            "must be 32 lowercase hex digits, not " + it.value().dump());
      m.checksums[it.key()] = it.value().get<std::string>();
    }
  }
  const json& tensors = require(doc, "", "tensors");
  if (!tensors.is_array()) throw ManifestError("/tensors", "must be an array");
  std::vector<ManifestTensor> declared;
  for (size_t t = 0; t < tensors.size(); ++t) {
    const std::string tat = "/tensors/" + std::to_string(t);
    if (!tensors[t].is_object()) throw ManifestError(tat, "must be an object");
    ManifestTensor d{.name = text(tensors[t], tat, "name")};
    const std::string dtype = text(tensors[t], tat, "dtype");
    const auto parsed = parse_dtype(dtype);
    if (!parsed)
      throw ManifestError(tat + "/dtype", "unknown dtype '" + dtype + "' of tensor '" + d.name + "'");
    d.dtype = *parsed;
    d.shape = shape_of(tensors[t], tat);
    const std::string role = text(tensors[t], tat, "role");
    if (role != "input" && role != "output" && role != "inplace")
      throw ManifestError(tat + "/role",
                          "tensor '" + d.name + "' has role '" + role + "' (one of input, output, inplace)");
    d.role = role == "input" ? Role::input : role == "inplace" ? Role::inplace : Role::output;
    if (d.role == Role::input) m.inputs.push_back(d);
    declared.push_back(std::move(d));
  }
  const json& outputs = require(doc, "", "outputs");
  if (!outputs.is_array() || outputs.empty()) throw ManifestError("/outputs", "must be a non-empty array");
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string at = "/outputs/" + std::to_string(i);
    const json& out = outputs[i];
    if (!out.is_object()) throw ManifestError(at, "must be an object");
    ManifestOutput o;
    o.name = text(out, at, "name");
    o.expected = text(out, at, "expected");
    o.expected_f64 = text(out, at, "expected_f64");
    o.alternate = optional_tensor(out, at, "alternate");
    o.touched = optional_tensor(out, at, "touched");
    o.alternate_index = optional_tensor(out, at, "alternate_index");
    if (m.format >= 4) {
      o.bound = optional_tensor(out, at, "bound");
      o.nan_permitted = optional_tensor(out, at, "nan_permitted");
    } else {
      // Older formats have neither: refused, not ignored (a reader that honoured them would
      // judge the case differently from one that did not).
      for (const char* key : {"bound", "nan_permitted"})
        if (out.contains(key))
          throw ManifestError(at + "/" + key, std::string(key) +
                                                  " is a golden format 4 field, but the format is " +
                                                  std::to_string(m.format));
    }
    if (m.format >= 2 && o.alternate.empty() != o.alternate_index.empty())
      throw ManifestError(at,
                          "output '" + o.name + "' must name both alternate and alternate_index, or neither");
    const json& tol = require(out, at, "tolerance");
    if (!tol.is_object()) throw ManifestError(at + "/tolerance", "must be an object");
    o.tolerance.atol = tolerance_value(tol, at + "/tolerance", "atol");
    o.tolerance.rtol = tolerance_value(tol, at + "/tolerance", "rtol");
    o.tolerance.reason = optional_text(tol, at + "/tolerance", "reason");

    // The output's dtype, shape and role come from its entry in `tensors`.
    size_t found = 0;
    for (size_t t = 0; t < declared.size(); ++t) {
      if (declared[t].name != o.name) continue;
      const std::string tat = "/tensors/" + std::to_string(t);
      if (++found > 1) throw ManifestError(tat, "tensor '" + o.name + "' is listed twice");
      if (declared[t].role == Role::input)
        throw ManifestError(tat + "/role",
                            "tensor '" + o.name +
                                "' is listed in outputs, so its role must be output or inplace, "
                                "not 'input'");
      static_cast<ManifestTensor&>(o) = declared[t];
    }
    if (found == 0) throw ManifestError(at + "/name", "output '" + o.name + "' has no entry in tensors");
    // Without `touched` an in-place tensor's untouched elements would only be compared
    // within tolerance, not bit for bit.
    if (o.role == Role::inplace && o.touched.empty())
      throw ManifestError(at, "in-place output '" + o.name + "' has no touched tensor");
    m.outputs.push_back(std::move(o));
  }
  return m;
}

}  // namespace kvbench
