#include "golden/golden_case.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "check/compare.hpp"
#include "core/float_format.hpp"
#include "core/rng.hpp"
#include "core/file_io.hpp"
#include "golden/checksum.hpp"
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

std::string case_hash(const CaseDef& def, const OpCase& op) {
  nlohmann::json j{{"op", def.op}, {"name", def.name}, {"seed", def.seed}, {"body", def.body}};
  // Inputs from files: the same case file with other bytes in its files is another case.
  for (const auto& f : op.file_inputs()) j["files"][f.source.key] = f.sha256;
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

// Doubles in the narrowest of F16, BF16, F32 and F64 that gives back every value bit for
// bit when widened (format 2): a quotient rounded to f16 takes 2 bytes, not 8. As F64 the
// values are borrowed, not copied, when `borrow` (they must outlive the StoredTensor).
StoredTensor compact_f64(const std::vector<double>& values, const Shape& shape, bool borrow = false) {
  const auto same_bits = [](double a, double b) { return std::memcmp(&a, &b, 8) == 0; };
  const auto holds = [&](double (*round_trip)(double)) {
    for (double v : values)  // stops at the first value the format cannot hold
      if (!same_bits(round_trip(v), v)) return false;
    return true;
  };
  for (const auto& [t, round_trip] : {std::pair{DType::f16, +[](double v) { return round_f16(v); }},
                                      std::pair{DType::bf16, +[](double v) { return round_bf16(v); }},
                                      std::pair{DType::f32, +[](double v) { return round_f32(v); }}})
    if (holds(round_trip)) {
      Tensor narrow("", t, {static_cast<int64_t>(values.size())}, Role::output);
      narrow.set_range(0, values.size(), values.data());
      return StoredTensor{safetensors_dtype(t), shape, std::move(narrow.bytes())};
    }
  if (!borrow) return f64_stored(values, shape);
  // (The F64 bytes are the doubles' own: little-endian IEEE, as f64_stored copies them.)
  return StoredTensor{.dtype = "F64", .shape = shape,
                      .borrowed = {reinterpret_cast<const uint8_t*>(values.data()), values.size() * sizeof(double)}};
}

// Frees a golden array once it is stored (the golden of a large output is its case's
// largest allocation; holding every array to the end would double the peak).
template <typename T>
void release(std::vector<T>& v) {
  std::vector<T>().swap(v);
}

// An in-place output's expected_f64: its touched elements only, in ascending index order.
StoredTensor touched_f64(const Expected& e) {
  std::vector<double> kept;
  for (size_t i = 0; i < e.exact.size(); ++i)
    if (e.touched[i]) kept.push_back(e.exact[i]);
  return compact_f64(kept, {static_cast<int64_t>(kept.size())});
}

// One bit per element, element i at bit i % 8 of byte i / 8 (numpy:
// unpackbits(bitorder="little")).
StoredTensor bitmask(const std::vector<uint8_t>& flags) {
  StoredTensor s{"U8", {static_cast<int64_t>((flags.size() + 7) / 8)}, std::vector<uint8_t>((flags.size() + 7) / 8, 0)};
  for (size_t i = 0; i < flags.size(); ++i)
    if (flags[i]) s.bytes[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
  return s;
}

nlohmann::json section(const nlohmann::json& doc, const char* name) {
  return doc.contains(name) ? doc[name] : nlohmann::json::object();
}

}  // namespace

size_t write_golden_case(const CaseDef& def, const OpCase& op, const std::string& dir) {
  const TensorSet tensors = op.make_tensors();
  std::vector<Expected> expected = op.golden(tensors);  // each array released once stored
  const nlohmann::json resolved = op.resolved();
  const std::string stem = case_file_stem(def.name);
  SafetensorsFile st;
  nlohmann::json manifest{{"kvbench_version", KVBENCH_VERSION},
                          {"format", kGoldenFormat},
                          {"case", def.name},
                          {"op", def.op},
                          {"source", def.file},
                          {"case_hash", case_hash(def, op)},
                          {"seed", def.seed},
                          // As the case ran: defaults and derived values resolved, every dtype.
                          {"attributes", section(resolved, "attributes")},
                          {"shapes", section(resolved, "shapes")},
                          {"inputs", section(resolved, "inputs")},
                          {"dtypes", section(resolved, "dtypes")},
                          {"safetensors", stem + ".safetensors"},
                          {"describe", op.description()}};
  if (op.flops() > 0) manifest["flops"] = op.flops();
  if (!op.file_inputs().empty()) manifest["input_files"] = file_inputs_json(op.file_inputs());
  for (const auto& t : tensors.tensors) {
    const StoredTensor stored = stored_view(t);
    nlohmann::json entry{{"name", t.name()},
                         {"role", role_name(t.role())},
                         {"dtype", dtype_name(t.dtype())},
                         {"shape", t.shape()},
                         {"packing", packing_name(t.dtype())},
                         {"stored_dtype", stored.dtype},
                         {"stored_shape", stored.shape}};
    // An element of a tensorlist (FIA's key.b): the list it belongs to and its index.
    const std::string& declared = op.args().signature().tensor(t.name())->name;
    if (declared != t.name()) entry["list"] = {{"of", declared}, {"index", std::stoll(t.name().substr(declared.size() + 1))}};
    manifest["tensors"].push_back(std::move(entry));
    if (t.role() != Role::output) st.tensors[t.name()] = stored;
  }
  std::vector<Tensor> expected_tensors;  // kept alive until the file is written
  expected_tensors.reserve(expected.size());
  for (auto& e : expected) {
    const Tensor& initial = tensors.at(e.tensor);
    nlohmann::json out{{"name", e.tensor},
                       {"expected", "expected." + e.tensor},
                       {"expected_f64", "expected_f64." + e.tensor},
                       {"tolerance", {{"atol", e.tolerance.atol}, {"rtol", e.tolerance.rtol}}}};
    if (!e.tolerance.reason.empty()) out["tolerance"]["reason"] = e.tolerance.reason;
    expected_tensors.push_back(expected_tensor(e, initial));
    st.tensors["expected." + e.tensor] = stored_view(expected_tensors.back());
    release(e.value);
    // An in-place output's untouched elements hold their initial value, which the input
    // tensor has: expected_f64 lists the touched elements only.
    StoredTensor& exact = st.tensors["expected_f64." + e.tensor];
    exact = e.touched.empty() ? compact_f64(e.exact, initial.shape(), true) : touched_f64(e);
    if (!exact.borrowed.data()) release(e.exact);
    // Alternates are rare (rounding boundaries): their indices and values only.
    std::vector<int64_t> alternates;
    std::vector<double> alternate_values;
    for (size_t i = 0; i < e.alternate.size(); ++i)
      if (e.has_alternate(i)) {
        alternates.push_back(static_cast<int64_t>(i));
        alternate_values.push_back(e.alternate[i]);
      }
    release(e.alternate);
    if (!alternates.empty()) {
      st.tensors["alternate." + e.tensor] = compact_f64(alternate_values, {static_cast<int64_t>(alternates.size())});
      StoredTensor index{"I64", {static_cast<int64_t>(alternates.size())}, std::vector<uint8_t>(alternates.size() * 8)};
      std::memcpy(index.bytes.data(), alternates.data(), index.bytes.size());
      st.tensors["alternate_index." + e.tensor] = std::move(index);
      out["alternate"] = "alternate." + e.tensor;
      out["alternate_index"] = "alternate_index." + e.tensor;
    }
    if (!e.touched.empty()) {
      st.tensors["touched." + e.tensor] = bitmask(e.touched);
      out["touched"] = "touched." + e.tensor;
      release(e.touched);
    }
    manifest["outputs"].push_back(out);
  }
  st.metadata["kvbench_manifest"] = stem + ".json";
  st.metadata["case_hash"] = manifest["case_hash"];
  manifest["checksums"] = {{"algorithm", kChecksumAlgorithm}, {"tensors", nlohmann::json::object()}};
  for (const auto& [name, t] : st.tensors) manifest["checksums"]["tensors"][name] = checksum_hex(t.data());
  const std::string base = (fs::path(dir) / stem).string();
  const std::string text = manifest.dump(2) + "\n";
  AtomicFile data(base + ".safetensors"), manifest_file(base + ".json");
  write_safetensors(data, st);
  manifest_file.write(text);
  data.sync();
  manifest_file.sync();
  data.commit();
  manifest_file.commit();
  size_t bytes = text.size();
  for (const auto& [name, t] : st.tensors) bytes += t.data().size();
  return bytes;
}

namespace {

// The bytes of `key` in `file` once its header entry has the dtype and shape the manifest
// requires: nothing is read (or allocated) for an entry of the wrong size.
std::vector<uint8_t> read_checked(const SafetensorsReader& file, const std::string& key, const std::string& dtype,
                                  const Shape& shape, const std::string& note = "") {
  const TensorEntry* e = file.find(key);
  if (!e) throw std::runtime_error(file.path() + " has no tensor '" + key + "'");
  if (e->dtype != dtype)
    throw std::runtime_error(file.path() + ": tensor '" + key + "' has dtype " + e->dtype + ", expected " + dtype + note);
  if (e->shape != shape)
    throw std::runtime_error(file.path() + ": tensor '" + key + "' has shape " + shape_string(e->shape) + ", expected " +
                             shape_string(shape));
  return file.read(*e);
}

Tensor load_tensor(const SafetensorsReader& file, const std::string& key, const ManifestOutput& o) {
  const std::string note = dtype_bits(o.dtype) == 4 ? " (" + packing_name(o.dtype) + ")" : "";
  std::vector<uint8_t> bytes = read_checked(file, key, safetensors_dtype(o.dtype), stored_shape(o.dtype, o.shape), note);
  Tensor t(o.name, o.dtype, o.shape, o.role);
  if (bytes.size() != t.bytes().size())  // cannot happen once dtype and shape match; kept as a guard
    throw std::runtime_error(file.path() + ": tensor '" + key + "' holds " + std::to_string(bytes.size()) +
                             " bytes, expected " + std::to_string(t.bytes().size()));
  t.bytes() = std::move(bytes);
  return t;
}

// Doubles stored as F64 (format 1), or in format 2 as F64, F32, F16 or BF16 (widened).
std::vector<double> load_f64(const SafetensorsReader& file, const std::string& key, const Shape& shape, int format) {
  const TensorEntry* e = file.find(key);
  for (DType narrow : {DType::f16, DType::bf16, DType::f32})
    if (format >= 2 && e && e->dtype == safetensors_dtype(narrow)) {
      Tensor t(key, narrow, shape, Role::output);
      t.bytes() = read_checked(file, key, e->dtype, shape);
      return t.values();
    }
  const std::vector<uint8_t> bytes =
      read_checked(file, key, "F64", shape, format >= 2 ? " (or F32, F16, BF16)" : "");
  std::vector<double> v(bytes.size() / 8);
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * 8);
  return v;
}

// 1 where the operator writes, 0 where the initial bits must stay: one byte per element
// (format 1), or one bit per element, little-endian within each byte (format 2).
std::vector<uint8_t> load_touched(const SafetensorsReader& file, const std::string& key, const Shape& shape, int format) {
  const size_t n = shape_numel(shape);
  if (format >= 2) {
    const std::vector<uint8_t> bits = read_checked(file, key, "U8", {static_cast<int64_t>((n + 7) / 8)}, " (one bit per element)");
    std::vector<uint8_t> t(n);
    for (size_t i = 0; i < n; ++i) t[i] = (bits[i / 8] >> (i % 8)) & 1u;
    if (n % 8 && bits.back() >> (n % 8))
      throw std::runtime_error(file.path() + ": tensor '" + key + "' has bits set past its " + std::to_string(n) + " elements");
    return t;
  }
  std::vector<uint8_t> t = read_checked(file, key, "U8", shape);
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i] > 1)
      throw std::runtime_error(file.path() + ": tensor '" + key + "' holds " + std::to_string(t[i]) + " at " +
                               index_string(shape, static_cast<int64_t>(i)) + " (must be 0 or 1)");
  return t;
}

// Format 2's sparse alternates: values at ascending, distinct flat indices inside the tensor.
std::vector<double> load_sparse_alternates(const SafetensorsReader& file, const ManifestOutput& o, size_t n) {
  const TensorEntry* e = file.find(o.alternate_index);
  if (!e) throw std::runtime_error(file.path() + " has no tensor '" + o.alternate_index + "'");
  if (e->shape.size() != 1) throw std::runtime_error(file.path() + ": tensor '" + o.alternate_index + "' must be one-dimensional");
  const std::vector<double> values = load_f64(file, o.alternate, e->shape, 2);
  const std::vector<uint8_t> raw = read_checked(file, o.alternate_index, "I64", e->shape);
  std::vector<double> dense(n, Expected::none);
  int64_t previous = -1;
  for (size_t k = 0; k < values.size(); ++k) {
    int64_t i;
    std::memcpy(&i, raw.data() + 8 * k, 8);
    if (i <= previous || i >= static_cast<int64_t>(n))
      throw std::runtime_error(file.path() + ": tensor '" + o.alternate_index + "' holds " + std::to_string(i) + " at " +
                               std::to_string(k) + ": indices must ascend within [0, " + std::to_string(n) + ")");
    dense[static_cast<size_t>(i)] = values[k];
    previous = i;
  }
  return dense;
}

// Format 2's expected_f64 of an in-place output: the touched elements in ascending order;
// the others hold their initial value.
std::vector<double> load_touched_f64(const SafetensorsReader& file, const ManifestOutput& o, const std::vector<uint8_t>& touched,
                                     const Tensor& before) {
  size_t count = 0;
  for (uint8_t t : touched) count += t;
  const std::vector<double> values = load_f64(file, o.expected_f64, {static_cast<int64_t>(count)}, 2);
  std::vector<double> dense(touched.size());
  for (size_t i = 0, k = 0; i < dense.size(); ++i) dense[i] = touched[i] ? values[k++] : before.get(i);
  return dense;
}

}  // namespace

CaseResult check_golden_case(const GoldenManifest& m, const std::string& actual_path) {
  const auto start = std::chrono::steady_clock::now();
  CaseResult r{.name = m.name, .file = m.source, .op = m.op, .resolved = m.resolved};
  try {
    const SafetensorsReader golden(m.safetensors);
    std::error_code ec;
    if (!fs::exists(actual_path, ec)) throw std::runtime_error("no actual output file " + actual_path);
    const SafetensorsReader actual(actual_path);
    for (const ManifestOutput& out : m.outputs) {
      const Tensor expected = load_tensor(golden, out.expected, out);
      const Tensor before = out.role == Role::inplace ? load_tensor(golden, out.name, out) : expected;
      const Tensor got = load_tensor(actual, out.name, out);
      Expected e{.tensor = out.name};
      e.value = expected.values();
      if (!out.touched.empty()) e.touched = load_touched(golden, out.touched, out.shape, m.format);
      e.exact = m.format >= 2 && !e.touched.empty() ? load_touched_f64(golden, out, e.touched, before)
                                                    : load_f64(golden, out.expected_f64, out.shape, m.format);
      e.alternate = out.alternate.empty() ? std::vector<double>(expected.numel(), Expected::none)
                    : m.format >= 2       ? load_sparse_alternates(golden, out, expected.numel())
                                          : load_f64(golden, out.alternate, out.shape, m.format);
      e.tolerance = out.tolerance;
      r.outputs.push_back({compare_output(e, got, before), e.tolerance, out.shape});
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
