// The generic phases of every case, driven by the operator's declaration.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "cases/schema.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "ops/operator.hpp"
#include "vk/runtime.hpp"

namespace kvbench {

Tensor& TensorSet::at(const std::string& name) {
  for (auto& t : tensors)
    if (t.name() == name) return t;
  throw std::logic_error("no tensor named " + name);
}

const Tensor& TensorSet::at(const std::string& name) const { return const_cast<TensorSet*>(this)->at(name); }

bool TensorSet::has(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.name() == name) return true;
  return false;
}

double OpCase::traffic_bytes(const TensorSet& io) const {
  double bytes = 0;
  for (const auto& t : io.tensors)
    bytes += static_cast<double>(t.bytes().size()) * (t.role() == Role::inplace ? 2 : 1);
  return bytes;
}

Role OpCase::role(const std::string& tensor) const {
  const TensorDecl* d = args_.signature().tensor(tensor);
  if (!d) throw std::logic_error(args_.signature().id + ": tensor " + tensor + " is not declared");
  return d->role;
}

void OpCase::fill_with(Tensor& t, const std::function<double(size_t)>& value) const {
  // Chunks of an even number of elements (whole bytes of packed s4/u4), each made into a
  // small buffer and stored in one pass.
  constexpr size_t kChunk = size_t{1} << 15;
  const size_t n = t.numel(), chunks = (n + kChunk - 1) / kChunk;
  parallel_for(static_cast<int64_t>(chunks), chunks > 1 ? args_.threads() : 1, [&](int64_t c) {
    const size_t begin = static_cast<size_t>(c) * kChunk, count = std::min(kChunk, n - begin);
    std::vector<double> x(count);
    for (size_t i = 0; i < count; ++i) x[i] = value(begin + i);
    t.set_range(begin, count, x.data());
  });
}

void OpCase::fill_uniform(Tensor& t, std::pair<double, double> range) const {
  const CounterRng rng(args_.seed(), t.name());
  fill_with(t, [&](size_t i) { return rng.uniform(i, range.first, range.second); });
}

void OpCase::fill_values(Tensor& t, const std::vector<int64_t>& values) {
  if (values.size() != t.numel())
    throw std::logic_error("fill_values: " + t.name() + " has another element count");
  for (size_t i = 0; i < values.size(); ++i) t.set(i, static_cast<double>(values[i]));
}

void OpCase::fill(Tensor& t) const {
  const TensorDecl* d = args_.signature().tensor(t.name());
  if (!d || !d->range) throw std::logic_error(args_.signature().id + ": no way to fill tensor " + t.name());
  fill_uniform(t, args_.range(t.name()));
}

const FileInput* OpCase::file_input(const std::string& tensor) const {
  for (const auto& f : file_inputs_)
    if (f.source.key == tensor && f.tensor) return &f;
  return nullptr;
}

void OpCase::fill_generated(TensorSet& ts) const {
  for (auto& t : ts.tensors)
    if (t.role() != Role::output && generated(t.name())) fill(t);
}

TensorSet OpCase::make_tensors(OutputData outputs) const {
  TensorSet ts;
  for (auto& spec : tensor_specs()) {
    const Role r = role(spec.name);
    if (r == Role::output && outputs == OutputData::none) {
      ts.tensors.push_back(Tensor::unallocated(spec.name, spec.dtype, spec.shape, r));
      continue;
    }
    Tensor t(spec.name, spec.dtype, spec.shape, r);
    if (const FileInput* f = file_input(spec.name)) load_file_input(*f, t);
    ts.tensors.push_back(std::move(t));
  }
  fill_generated(ts);
  return ts;
}

std::vector<Expected> OpCase::golden(const TensorSet& inputs) const {
  std::vector<Expected> out = reference(inputs);
  for (auto& e : out) {
    const Role r = role(e.tensor);
    if (r == Role::input) throw std::logic_error("the reference returned input " + e.tensor);
    if (e.is_in_place() != (r == Role::inplace))
      throw std::logic_error("the reference's " + e.tensor + " is " + (e.is_in_place() ? "" : "not ") +
                             "in place");
    const Tensor& t = inputs.at(e.tensor);
    const Tensor& v = e.value();
    if (v.dtype() != t.dtype() || v.shape() != t.shape() ||
        (!e.exact().empty() && e.exact().size() != t.numel()))
      throw std::logic_error("the reference's " + e.tensor + " does not have the tensor's dtype and shape");
    e.finish();
    const auto alternates = e.alternates();
    const auto written = e.written();
    if ((!alternates.empty() && alternates.back().index >= t.numel()) ||
        (!written.empty() && written.back().index >= t.numel()))
      throw std::logic_error("the reference's " + e.tensor + " names an element past the tensor's end");
    e.tolerance =
        args_.tolerance(e.tensor, e.data_tolerance ? *e.data_tolerance : default_tolerance(e.tensor));
    // A case file's tolerance (with its reason) replaces the derived per-element bound.
    e.tolerance_override = !e.tolerance.reason.empty() && e.has_bound();
    // The golden only: a faulted or variant reference is an actual judged against it.
    if (fault().empty() && variant().empty())
      if (const auto vacuous = accepts_any_output(e)) throw std::runtime_error(*vacuous);
  }
  return out;
}

std::optional<std::string> OpCase::skip_reason(const DeviceInfo& dev) const {
  for (const auto& spec : tensor_specs()) {
    const size_t numel = shape_numel(spec.shape);
    if (numel >= (size_t{1} << 32))
      return "tensor " + spec.name + " has " + std::to_string(numel) +
             " elements: kvbench's kernels index elements with 32-bit integers";
    const size_t bytes = (numel * dtype_bits(spec.dtype) + 7) / 8;
    if (bytes > dev.max_storage_buffer_range)
      return "tensor " + spec.name + " is " + std::to_string(bytes) +
             " bytes, over the maxStorageBufferRange (" + std::to_string(dev.max_storage_buffer_range) +
             " bytes) of " + dev.name;
  }
  try {
    check_device(dev);
  } catch (const SkipCase& skip) {
    return std::string(skip.what());
  }
  return std::nullopt;
}

nlohmann::json OpCase::resolved() const {
  nlohmann::json r = args_.resolved();
  r["dtypes"] = nlohmann::json::object();
  for (const auto& spec : tensor_specs()) r["dtypes"][spec.name] = dtype_name(spec.dtype);
  return r;
}

namespace {

// The sizes come from shapes and index values; name the section that sets them.
std::string size_pointer(const CaseDef& def) {
  for (const char* s : {"shapes", "inputs", "attributes"})
    if (def.body.contains(s)) return std::string("/") + s;
  return "";
}

// Every tensor's element count representable, the host memory of a case within the
// budget, and each generator range representable in its tensor's dtype: checked from the
// shapes, before anything is allocated.
// A byte count that may exceed 2^64 (no cast of it to an integer: that is undefined).
std::string bytes_text(long double bytes) {
  if (bytes < 18446744073709551616.0L) return std::to_string(static_cast<unsigned long long>(bytes));
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4Lg", bytes);
  return buf;
}

// A tensor's initial and working copies, and for outputs the golden (src/check/expected.hpp):
// its value in the dtype (the whole tensor), 16 bytes per element of a plain output (the
// exact double, and room for alternates or its narrowed copy in a file), and for an
// in-place output 32 bytes per element written (index, exact, alternate) and a bit per
// element (touched).
long double tensor_host_bytes(size_t n, DType dtype, Role role, long double written) {
  const long double bytes = static_cast<long double>(n) * dtype_bits(dtype) / 8;
  switch (role) {
    case Role::input: return 2 * bytes;
    case Role::output: return 3 * bytes + 16.0L * n;
    case Role::inplace: return 3 * bytes + 32.0L * written + n / 8.0L;
  }
  return 0;
}

long double tensor_host_bytes(const OpCase& c, const TensorSpec& spec, size_t n) {
  const Role r = c.role(spec.name);
  return tensor_host_bytes(n, spec.dtype, r,
                           r == Role::inplace ? std::min<long double>(c.written_elements(spec), n) : 0);
}

void check_sizes(const OpCase& c, const CaseDef& def) {
  uint64_t host = 0;
  for (const auto& spec : c.tensor_specs()) {
    size_t n = 0;
    try {
      n = shape_numel(spec.shape);
    } catch (const std::length_error&) {
      throw CaseError(size_pointer(def), "tensor " + spec.name + " " + shape_string(spec.shape) +
                                             " has more elements than 2^64");
    }
    const long double need = tensor_host_bytes(c, spec, n);
    const long double total = static_cast<long double>(host) + need;
    if (total > static_cast<long double>(c.args().options().memory_budget))
      throw CaseError(size_pointer(def),
                      "tensor " + spec.name + " " + shape_string(spec.shape) + " brings the case to " +
                          bytes_text(total) + " bytes of host memory, over the budget of " +
                          std::to_string(c.args().options().memory_budget) + " bytes (--memory-budget)");
    host = static_cast<uint64_t>(total);
    const TensorDecl* d = c.args().signature().tensor(spec.name);
    if (d && d->range && dtype_is_float(spec.dtype)) {
      const auto [lo, hi] = c.args().range(spec.name);
      const double max = spec.dtype == DType::f16    ? 65504.0
                         : spec.dtype == DType::bf16 ? 0x1.fep127
                                                     : 0x1.fffffep127;
      if (std::fabs(lo) > max || std::fabs(hi) > max)
        throw CaseError(def.locate("/ranges/" + pointer_token(spec.name)),
                        "range of " + spec.name + " exceeds the largest finite " +
                            std::string(dtype_name(spec.dtype)) + " (" + std::to_string(max) +
                            "): its values would not be representable");
    }
  }
}

// Every file the case takes an input from, checked against the tensor of its name (dtype
// and shape) or, for an `inputs` parameter with no tensor of its name, as its values only.
std::vector<FileInput> check_file_inputs(const OpCase& c) {
  std::vector<FileInput> out;
  const auto specs = c.tensor_specs();
  for (const FileSource& s : c.args().file_sources()) {
    const auto spec =
        std::find_if(specs.begin(), specs.end(), [&](const TensorSpec& t) { return t.name == s.key; });
    std::optional<TensorExpectation> expected;
    if (spec != specs.end())
      expected = TensorExpectation{spec->dtype, spec->shape};
    else if (!c.args().signature().param(s.key)) {
      const std::string& when = c.args().signature().tensor(s.key)->present;
      throw CaseError(s.pointer, "this case has no tensor " + s.key +
                                     (when.empty() ? "" : " (only when " + when + ")") +
                                     ": nothing to take from " + s.written);
    }
    out.push_back(check_file_input(s, expected));
  }
  return out;
}

}  // namespace

uint64_t inplace_host_bytes_each(DType dtype) {
  return (3 * static_cast<uint64_t>(dtype_bits(dtype)) + 7) / 8;
}

uint64_t host_bytes(const OpCase& c) {
  long double total = 0;
  for (const auto& spec : c.tensor_specs()) total += tensor_host_bytes(c, spec, shape_numel(spec.shape));
  return static_cast<uint64_t>(total);  // within the budget: instantiate_case checked it
}

std::unique_ptr<OpCase> instantiate_case(const Operator& op, const CaseDef& def, const RunOptions& options) {
  try {
    // A dtype, range or tolerance may name an optional tensor this expansion leaves out
    // (a sweep turns k_zero_point on and off): it is declared, so it is no typo, and the
    // resolved dtypes in the reports show which tensors the case had.
    auto c = op.instantiate(Args(def, op.signature(), options));
    check_sizes(*c, def);  // file inputs included: each is the size of its tensor
    c->set_file_inputs(check_file_inputs(*c));
    return c;
  } catch (const CaseError&) {
    throw;
  } catch (const std::exception& e) {
    throw CaseError("", std::string("the case could not be instantiated: ") + e.what());
  }
}

}  // namespace kvbench
