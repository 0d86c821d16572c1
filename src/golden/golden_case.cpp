#include "golden/golden_case.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "check/compare.hpp"
#include "core/rng.hpp"
#include "golden/safetensors.hpp"

namespace kvbench {
namespace fs = std::filesystem;

std::string case_file_stem(const std::string& name) {
  std::string s;
  for (char c : name) {
    if (c == '[' || c == ',') s += '.';
    else if (c == '=') s += '-';
    else if (c == ']') continue;
    else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') s += c;
    else s += '_';
  }
  return s;
}

std::string case_hash(const CaseDef& def) {
  const nlohmann::json j{{"op", def.op}, {"name", def.name}, {"seed", def.seed}, {"body", def.body}};
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a64(j.dump())));
  return buf;
}

namespace {

// The golden of one output in its own dtype: in-place tensors keep their initial bits
// where the operator does not write.
Tensor expected_tensor(const Expected& e, const Tensor& initial) {
  Tensor t = initial;
  for (size_t i = 0; i < t.numel(); ++i)
    if (e.is_touched(i)) t.set(i, e.value[i]);
  return t;
}

bool has_alternates(const Expected& e) {
  for (double a : e.alternate)
    if (!std::isnan(a)) return true;
  return false;
}

nlohmann::json section(const nlohmann::json& doc, const char* name) {
  return doc.contains(name) ? doc[name] : nlohmann::json::object();
}

}  // namespace

size_t write_golden_case(const CaseDef& def, const OpCase& op, const std::string& dir) {
  const TensorSet tensors = op.make_tensors();
  const std::vector<Expected> expected = op.golden(tensors);
  const nlohmann::json resolved = op.resolved();
  const std::string stem = case_file_stem(def.name);
  SafetensorsFile st;
  nlohmann::json manifest{{"kvbench_version", KVBENCH_VERSION},
                          {"case", def.name},
                          {"op", def.op},
                          {"source", def.file},
                          {"case_hash", case_hash(def)},
                          {"seed", def.seed},
                          // As the case ran: defaults and derived values resolved, every dtype.
                          {"attributes", section(resolved, "attributes")},
                          {"shapes", section(resolved, "shapes")},
                          {"inputs", section(resolved, "inputs")},
                          {"dtypes", section(resolved, "dtypes")},
                          {"safetensors", stem + ".safetensors"},
                          {"describe", op.describe()}};
  for (const auto& t : tensors.tensors) {
    const StoredTensor stored = to_stored(t);
    manifest["tensors"].push_back({{"name", t.name()},
                                   {"role", role_name(t.role())},
                                   {"dtype", dtype_name(t.dtype())},
                                   {"shape", t.shape()},
                                   {"packing", packing_name(t.dtype())},
                                   {"stored_dtype", stored.dtype},
                                   {"stored_shape", stored.shape}});
    if (t.role() != Role::output) st.tensors[t.name()] = stored;
  }
  for (const auto& e : expected) {
    const Tensor& initial = tensors.at(e.tensor);
    nlohmann::json out{{"name", e.tensor},
                       {"expected", "expected." + e.tensor},
                       {"expected_f64", "expected_f64." + e.tensor},
                       {"tolerance", {{"atol", e.tolerance.atol}, {"rtol", e.tolerance.rtol}}}};
    if (!e.tolerance.reason.empty()) out["tolerance"]["reason"] = e.tolerance.reason;
    st.tensors["expected." + e.tensor] = to_stored(expected_tensor(e, initial));
    st.tensors["expected_f64." + e.tensor] = f64_stored(e.exact, initial.shape());
    if (has_alternates(e)) {
      st.tensors["alternate." + e.tensor] = f64_stored(e.alternate, initial.shape());
      out["alternate"] = "alternate." + e.tensor;
    }
    if (!e.touched.empty()) {
      st.tensors["touched." + e.tensor] = StoredTensor{"U8", initial.shape(), e.touched};
      out["touched"] = "touched." + e.tensor;
    }
    manifest["outputs"].push_back(out);
  }
  st.metadata["kvbench_manifest"] = stem + ".json";
  st.metadata["case_hash"] = manifest["case_hash"];
  const std::string base = (fs::path(dir) / stem).string();
  write_safetensors(base + ".safetensors", st);
  const std::string text = manifest.dump(2) + "\n";
  {
    std::ofstream out(base + ".json", std::ios::binary);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + base + ".json");
  }
  size_t bytes = text.size();
  for (const auto& [name, t] : st.tensors) bytes += t.bytes.size();
  return bytes;
}

namespace {

Tensor load_tensor(const SafetensorsFile& f, const std::string& key, const std::string& name, DType dtype,
                   const Shape& shape, Role role, const std::string& where) {
  auto it = f.tensors.find(key);
  if (it == f.tensors.end()) throw std::runtime_error(where + " has no tensor '" + key + "'");
  Tensor t(name, dtype, shape, role);
  const StoredTensor expect = to_stored(t);
  if (it->second.dtype != expect.dtype)
    throw std::runtime_error(where + ": tensor '" + key + "' has dtype " + it->second.dtype + ", expected " + expect.dtype +
                             (dtype_bits(dtype) == 4 ? " (" + packing_name(dtype) + ")" : ""));
  if (it->second.shape != expect.shape)
    throw std::runtime_error(where + ": tensor '" + key + "' has shape " + shape_string(it->second.shape) + ", expected " +
                             shape_string(expect.shape));
  if (it->second.bytes.size() != t.bytes().size())
    throw std::runtime_error(where + ": tensor '" + key + "' holds " + std::to_string(it->second.bytes.size()) +
                             " bytes, expected " + std::to_string(t.bytes().size()));
  t.bytes() = it->second.bytes;
  return t;
}

std::vector<double> load_f64(const SafetensorsFile& f, const std::string& key, size_t n, const std::string& where) {
  auto it = f.tensors.find(key);
  if (it == f.tensors.end() || it->second.dtype != "F64" || it->second.bytes.size() != n * 8)
    throw std::runtime_error(where + ": missing or malformed tensor '" + key + "'");
  std::vector<double> v(n);
  std::memcpy(v.data(), it->second.bytes.data(), n * 8);
  return v;
}

}  // namespace

CaseResult check_golden_case(const std::string& manifest_path, const std::string& actual_path) {
  const auto start = std::chrono::steady_clock::now();
  std::ifstream in(manifest_path);
  const nlohmann::json m = nlohmann::json::parse(in);
  CaseResult r{.name = m["case"], .file = m.value("source", manifest_path), .op = m["op"]};
  const std::string golden_path = (fs::path(manifest_path).parent_path() / m["safetensors"].get<std::string>()).string();
  try {
    const SafetensorsFile golden = read_safetensors(golden_path);
    if (!fs::exists(actual_path)) throw std::runtime_error("no actual output file " + actual_path);
    const SafetensorsFile actual = read_safetensors(actual_path);
    for (const auto& out : m["outputs"]) {
      const std::string name = out["name"];
      nlohmann::json info;
      for (const auto& t : m["tensors"])
        if (t["name"] == name) info = t;
      const DType dtype = *parse_dtype(info["dtype"].get<std::string>());
      const Shape shape = info["shape"].get<Shape>();
      const Role role = info["role"] == "inplace" ? Role::inplace : Role::output;
      const Tensor expected = load_tensor(golden, out["expected"], name, dtype, shape, role, golden_path);
      const Tensor before = role == Role::inplace ? load_tensor(golden, name, name, dtype, shape, role, golden_path) : expected;
      const Tensor got = load_tensor(actual, name, name, dtype, shape, role, actual_path);
      Expected e{.tensor = name};
      e.value.resize(expected.numel());
      for (size_t i = 0; i < expected.numel(); ++i) e.value[i] = expected.get(i);
      e.exact = load_f64(golden, out["expected_f64"], expected.numel(), golden_path);
      e.alternate = out.contains("alternate") ? load_f64(golden, out["alternate"], expected.numel(), golden_path)
                                              : std::vector<double>(expected.numel(), Expected::none);
      if (out.contains("touched")) {
        const auto& t = golden.tensors.at(out["touched"].get<std::string>());
        e.touched = t.bytes;
      }
      e.tolerance.atol = out["tolerance"]["atol"];
      e.tolerance.rtol = out["tolerance"]["rtol"];
      e.tolerance.reason = out["tolerance"].value("reason", "");
      r.outputs.push_back({compare_output(e, got, before), e.tolerance, shape});
    }
    r.status = r.violations() == 0 ? Status::pass : Status::fail;
  } catch (const std::exception& ex) {
    r.status = Status::fail;
    r.reason = ex.what();
  }
  r.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace kvbench
