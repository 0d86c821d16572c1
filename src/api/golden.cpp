// kvbench::Golden (include/kvbench/golden.hpp): a manifest and its data, as `kvbench check`
// reads them (src/golden).
#include <filesystem>
#include <stdexcept>

#include "api/access.hpp"
#include "check/compare.hpp"
#include "check/output_text.hpp"
#include "golden/checksum.hpp"
#include "golden/expected_arrays.hpp"
#include "golden/golden_folder.hpp"

namespace kvbench {
namespace {

std::string located(const std::string& file, const ManifestError& e) {
  return file + (e.pointer().empty() ? "" : ": " + e.pointer()) + ": " + e.what();
}

const ManifestOutput& output_of(const GoldenManifest& m, const std::string& name) {
  for (const ManifestOutput& o : m.outputs)
    if (o.name == name) return o;
  throw std::out_of_range(m.path + ": case " + m.name + " has no output '" + name + "'");
}

const nlohmann::json& value_of(const GoldenManifest& m, const char* section, const std::string& name) {
  if (!m.resolved.contains(section) || !m.resolved[section].contains(name))
    throw std::out_of_range(m.path + ": case " + m.name + " has no " + std::string(section) + "/" + name);
  return m.resolved[section][name];
}

}  // namespace

Golden::Golden(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Golden::~Golden() = default;
Golden::Golden(Golden&&) noexcept = default;
Golden& Golden::operator=(Golden&&) noexcept = default;

Golden Golden::load(const std::string& manifest_path) {
  auto impl = std::make_unique<Impl>();
  try {
    impl->manifest = parse_manifest(read_manifest_json(manifest_path), manifest_path);
    verify_golden_data(impl->manifest);  // the bytes a test is judged by are the bytes written
  } catch (const ManifestError& e) {
    throw std::runtime_error(located(manifest_path, e));
  }
  impl->data = std::make_unique<SafetensorsReader>(impl->manifest.safetensors);
  for (const ManifestTensor& t : impl->manifest.inputs)
    impl->inputs.emplace(t.name, ArrayAccess::wrap(load_tensor(*impl->data, t.name, t)));
  return Golden(std::move(impl));
}

const std::string& Golden::name() const { return impl_->manifest.name; }
const std::string& Golden::op() const { return impl_->manifest.op; }
const std::string& Golden::source() const { return impl_->manifest.source; }
const std::string& Golden::path() const { return impl_->manifest.path; }

std::vector<std::string> Golden::inputs() const {
  std::vector<std::string> names;
  for (const ManifestTensor& t : impl_->manifest.inputs) names.push_back(t.name);
  return names;
}

std::vector<std::string> Golden::outputs() const {
  std::vector<std::string> names;
  for (const ManifestOutput& o : impl_->manifest.outputs) names.push_back(o.name);
  return names;
}

bool Golden::is_in_place(const std::string& output) const {
  return output_of(impl_->manifest, output).role == Role::inplace;
}

const Array& Golden::input(const std::string& name) const {
  const auto it = impl_->inputs.find(name);
  if (it == impl_->inputs.end())
    throw std::out_of_range(path() + ": case " + this->name() + " has no input '" + name + "'");
  return it->second;
}

Array Golden::expected(const std::string& output) const {
  const ManifestOutput& o = output_of(impl_->manifest, output);
  return ArrayAccess::wrap(load_tensor(*impl_->data, o.expected, o));
}

Array Golden::output(const std::string& output) const {
  const ManifestOutput& o = output_of(impl_->manifest, output);
  if (o.role == Role::inplace) return ArrayAccess::wrap(load_tensor(*impl_->data, o.name, o));
  // Poisoning reads the golden's values only (a NaN golden gets a finite poison): no side arrays.
  const Expected e = Expected::plain(load_tensor(*impl_->data, o.expected, o), {});
  Tensor buffer(o.name, o.dtype, o.shape, Role::output);
  poison_output(e, buffer);
  return ArrayAccess::wrap(std::move(buffer));
}

std::string Golden::tolerance(const std::string& output) const {
  const ManifestOutput& o = output_of(impl_->manifest, output);
  return o.bound.empty() ? tolerance_text(o.tolerance) : "the golden's per-element bound";
}

std::string Golden::attributes_json() const {
  return impl_->manifest.resolved.value("attributes", nlohmann::json::object()).dump();
}

std::string Golden::shapes_json() const {
  return impl_->manifest.resolved.value("shapes", nlohmann::json::object()).dump();
}

bool Golden::has_attribute(const std::string& name) const {
  const nlohmann::json& r = impl_->manifest.resolved;
  return r.contains("attributes") && r["attributes"].contains(name);
}

double Golden::number(const std::string& attribute) const {
  const nlohmann::json& v = value_of(impl_->manifest, "attributes", attribute);
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  if (!v.is_number())
    throw std::invalid_argument("attribute " + attribute + " is " + v.dump() + ", not a number");
  return v.get<double>();
}

std::string Golden::text(const std::string& attribute) const {
  const nlohmann::json& v = value_of(impl_->manifest, "attributes", attribute);
  if (!v.is_string())
    throw std::invalid_argument("attribute " + attribute + " is " + v.dump() + ", not a string");
  return v.get<std::string>();
}

int64_t Golden::size(const std::string& shape_name) const {
  const nlohmann::json& v = value_of(impl_->manifest, "shapes", shape_name);
  if (!v.is_number_integer())
    throw std::invalid_argument("shape " + shape_name + " is " + v.dump() + ", not one size");
  return v.get<int64_t>();
}

std::string Golden::repro() const { return repro_command("kvbench", source(), name(), ""); }

std::vector<std::string> golden_manifests(const std::string& folder) {
  const GoldenFolder found = scan_golden(folder);
  if (!found.invalid.empty()) throw std::runtime_error(found.invalid.front().to_string());
  std::vector<std::string> paths;
  for (const GoldenManifest& m : found.found) paths.push_back(m.path);
  return paths;
}

}  // namespace kvbench
