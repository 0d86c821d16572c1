#include "runner/golden_case.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "check/compare.hpp"
#include "core/rng.hpp"
#include "core/file_io.hpp"
#include "golden/checksum.hpp"
#include "golden/expected_arrays.hpp"
#include "golden/golden_check.hpp"
#include "golden/safetensors.hpp"

namespace kvbench {
namespace fs = std::filesystem;

std::string case_file_stem(const std::string& name) {
  std::string s;
  for (char c : name) {
    if (c == '[' || c == ',')
      s += '.';
    else if (c == '=')
      s += '-';
    else if (c == ']')
      continue;
    else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')
      s += c;
    else
      s += '_';
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

nlohmann::json section(const nlohmann::json& doc, const char* name) {
  return doc.contains(name) ? doc[name] : nlohmann::json::object();
}

}  // namespace

size_t write_golden_case(const CaseDef& def, const OpCase& op, const std::string& dir) {
  // Outputs need no data here: their goldens are the reference's.
  const TensorSet tensors = op.make_tensors(OutputData::none);
  std::vector<Expected> expected = op.golden(tensors);  // side arrays released once stored
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
    if (declared != t.name())
      entry["list"] = {{"of", declared}, {"index", std::stoll(t.name().substr(declared.size() + 1))}};
    manifest["tensors"].push_back(std::move(entry));
    if (t.role() != Role::output) st.tensors[t.name()] = stored;
  }
  for (auto& e : expected) {
    nlohmann::json out{{"name", e.tensor},
                       {"expected", "expected." + e.tensor},
                       {"expected_f64", "expected_f64." + e.tensor},
                       {"tolerance", {{"atol", e.tolerance.atol}, {"rtol", e.tolerance.rtol}}}};
    if (!e.tolerance.reason.empty()) out["tolerance"]["reason"] = e.tolerance.reason;
    st.tensors.merge(expected_tensors(e, out));
    // Freed once stored (a golden's largest allocations): what the file borrows stays.
    e.release_records();
    if (!st.tensors["expected_f64." + e.tensor].borrowed.data()) e.release_exact();
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

CaseResult check_golden_case(const GoldenManifest& m, const std::string& actual_path) {
  const auto start = std::chrono::steady_clock::now();
  CaseResult r{.name = m.name, .file = m.source, .op = m.op, .resolved = m.resolved};
  try {
    const SafetensorsReader golden(m.safetensors);
    std::error_code ec;
    if (!fs::exists(actual_path, ec)) throw std::runtime_error("no actual output file " + actual_path);
    const SafetensorsReader actual(actual_path);
    Tensor got;
    r.outputs = compare_with_golden(m, golden, [&](const ManifestOutput& out) -> const Tensor& {
      return got = load_tensor(actual, out.name, out);
    });
    r.status = r.violations() == 0 ? Status::pass : Status::fail;
  } catch (const std::exception& ex) {
    r.status = Status::fail;
    r.reason = ex.what();
  }
  r.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace kvbench
