#include "golden/expected_arrays.hpp"

#include <sys/resource.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <stdexcept>

#include "check/compare.hpp"
#include "core/float_format.hpp"
#include "core/run_options.hpp"

namespace kvbench {

namespace {

// Doubles read in chunks ([begin, begin + n) into out), so that a tensor's values can be
// examined and stored without a double per element in memory.
using ReadDoubles = std::function<void(size_t begin, size_t n, double* out)>;
constexpr size_t kReadChunk = size_t{1} << 14;

// The narrowest of F16, BF16 and F32 that gives back each of the n values bit for bit when
// widened, or nullopt (F64). `has_nan` tells whether any value is a NaN.
std::optional<DType> narrowest_float(size_t n, const ReadDoubles& read, bool& has_nan) {
  std::vector<double> chunk(std::min(n, kReadChunk));
  has_nan = false;
  for (size_t begin = 0; begin < n; begin += kReadChunk) {
    const size_t count = std::min(kReadChunk, n - begin);
    read(begin, count, chunk.data());
    for (size_t k = 0; k < count; ++k) has_nan = has_nan || std::isnan(chunk[k]);
  }
  for (const auto& [t, round_trip] : {std::pair{DType::f16, +[](double v) { return round_f16(v); }},
                                      std::pair{DType::bf16, +[](double v) { return round_bf16(v); }},
                                      std::pair{DType::f32, +[](double v) { return round_f32(v); }}}) {
    bool holds = true;  // stops at the first value the format cannot hold
    for (size_t begin = 0; holds && begin < n; begin += kReadChunk) {
      const size_t count = std::min(kReadChunk, n - begin);
      read(begin, count, chunk.data());
      for (size_t k = 0; holds && k < count; ++k) holds = same_bits(round_trip(chunk[k]), chunk[k]);
    }
    if (holds) return t;
  }
  return std::nullopt;
}

// The n values stored as `t` (a float dtype that holds them all), or as F64.
StoredTensor stored_doubles(std::optional<DType> t, size_t n, const ReadDoubles& read, const Shape& shape) {
  std::vector<double> chunk(std::min(n, kReadChunk));
  if (!t) {
    StoredTensor s{"F64", shape, std::vector<uint8_t>(n * 8)};
    for (size_t begin = 0; begin < n; begin += kReadChunk) {
      const size_t count = std::min(kReadChunk, n - begin);
      read(begin, count, chunk.data());
      std::memcpy(s.bytes.data() + begin * 8, chunk.data(), count * 8);
    }
    return s;
  }
  Tensor narrow("", *t, {static_cast<int64_t>(n)}, Role::output);
  for (size_t begin = 0; begin < n; begin += kReadChunk) {
    const size_t count = std::min(kReadChunk, n - begin);
    read(begin, count, chunk.data());
    narrow.set_range(begin, count, chunk.data());
  }
  return StoredTensor{safetensors_dtype(*t), shape, std::move(narrow.bytes())};
}

// expected_f64.<out> (format 2): the exact values in the narrowest float type that holds
// them; an in-place output's at its written elements only, in ascending index order (the
// others hold their initial value, which the input tensor has).
StoredTensor expected_f64(const Expected& e) {
  bool has_nan = false;
  if (e.is_in_place()) {
    const auto written = e.written();
    const ReadDoubles read = [&](size_t begin, size_t n, double* out) {
      for (size_t k = 0; k < n; ++k) out[k] = written[begin + k].exact;
    };
    return stored_doubles(narrowest_float(written.size(), read, has_nan), written.size(), read,
                          {static_cast<int64_t>(written.size())});
  }
  const Tensor& value = e.value();
  const std::vector<double>& exact = e.exact();
  if (!exact.empty()) {
    const ReadDoubles read = [&](size_t begin, size_t n, double* out) { std::copy_n(&exact[begin], n, out); };
    const auto t = narrowest_float(exact.size(), read, has_nan);
    if (t) return stored_doubles(t, exact.size(), read, value.shape());
    // F64: the doubles' own bytes (little-endian IEEE), borrowed rather than copied.
    return StoredTensor{
        .dtype = "F64",
        .shape = value.shape(),
        .borrowed = {reinterpret_cast<const uint8_t*>(exact.data()), exact.size() * sizeof(double)}};
  }
  // The exact values are the values: widened from value(), or its own bytes when its
  // dtype is the narrowest (no NaN, whose bits a round trip need not keep).
  const ReadDoubles read = [&](size_t begin, size_t n, double* out) { value.get_range(begin, n, out); };
  const auto t = narrowest_float(value.numel(), read, has_nan);
  if (t == value.dtype() && !has_nan) return stored_view(value);
  return stored_doubles(t, value.numel(), read, value.shape());
}

// touched.<out>: one bit per element, element i at bit i % 8 of byte i / 8 (numpy:
// unpackbits(bitorder="little")).
StoredTensor touched_bits(const Expected& e) {
  const size_t n = e.value().numel();
  StoredTensor s{"U8", {static_cast<int64_t>((n + 7) / 8)}, std::vector<uint8_t>((n + 7) / 8, 0)};
  for (const WrittenElement& w : e.written())
    s.bytes[w.index / 8] |= static_cast<uint8_t>(1u << (w.index % 8));
  return s;
}

}  // namespace

std::map<std::string, StoredTensor> expected_tensors(const Expected& e, nlohmann::json& out) {
  std::map<std::string, StoredTensor> st;
  st["expected." + e.tensor] = stored_view(e.value());
  st["expected_f64." + e.tensor] = expected_f64(e);
  // Alternates are rare (rounding boundaries): their indices and values only.
  const auto alternates = e.alternates();
  if (!alternates.empty()) {
    const auto n = static_cast<int64_t>(alternates.size());
    const ReadDoubles read = [&](size_t begin, size_t count, double* values) {
      for (size_t k = 0; k < count; ++k) values[k] = alternates[begin + k].value;
    };
    bool has_nan = false;
    st["alternate." + e.tensor] =
        stored_doubles(narrowest_float(alternates.size(), read, has_nan), alternates.size(), read, {n});
    StoredTensor index{"I64", {n}, std::vector<uint8_t>(alternates.size() * 8)};
    for (size_t k = 0; k < alternates.size(); ++k) {
      const auto i = static_cast<int64_t>(alternates[k].index);
      std::memcpy(index.bytes.data() + 8 * k, &i, 8);
    }
    st["alternate_index." + e.tensor] = std::move(index);
    out["alternate"] = "alternate." + e.tensor;
    out["alternate_index"] = "alternate_index." + e.tensor;
  }
  if (e.is_in_place()) {
    st["touched." + e.tensor] = touched_bits(e);
    out["touched"] = "touched." + e.tensor;
  }
  // From format 4: the per-element bound (unless a case file's tolerance replaces it; BF16
  // from format 5) and the elements where a NaN is permitted.
  if (e.has_bound() && !e.tolerance_override) {
    // Borrowed, not copied: the bound stays in `e` until the file is written.
    StoredTensor bound{e.bound_is_bf16() ? "BF16" : "F32", e.value().shape(), {}};
    bound.borrowed = e.bound_bytes();
    st["bound." + e.tensor] = std::move(bound);
    out["bound"] = "bound." + e.tensor;
  }
  const auto nan_ok = e.nan_permitted();
  if (!nan_ok.empty()) {
    StoredTensor index{"I64", {static_cast<int64_t>(nan_ok.size())}, std::vector<uint8_t>(nan_ok.size() * 8)};
    for (size_t k = 0; k < nan_ok.size(); ++k) {
      const auto i = static_cast<int64_t>(nan_ok[k]);
      std::memcpy(index.bytes.data() + 8 * k, &i, 8);
    }
    st["nan_permitted." + e.tensor] = std::move(index);
    out["nan_permitted"] = "nan_permitted." + e.tensor;
  }
  return st;
}

uint64_t golden_memory_budget() {
  uint64_t budget = default_memory_budget();
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    budget = std::min<uint64_t>(budget, limit.rlim_cur);
  return budget;
}

namespace {

std::string budget_text(uint64_t budget) {
  return "the memory budget of " + std::to_string(budget) +
         " bytes (half the physical memory, or the address-space limit when lower)";
}

// A failed allocation while `key` of `path` is read, as an error naming them.
[[noreturn]] void throw_no_memory(const std::string& path, const std::string& key, uint64_t bytes) {
  throw std::runtime_error(path + ": tensor '" + key + "': out of memory reading it (" +
                           std::to_string(bytes) + " bytes stored)");
}

}  // namespace

void check_output_memory(const SafetensorsReader& golden, const ManifestOutput& o, uint64_t budget) {
  // In long double: a shape's product is at most 2^48 (the manifest's limit), times a few bytes.
  const size_t numel = shape_numel(o.shape);
  const long double n = static_cast<long double>(numel);
  const long double stored = static_cast<long double>(dtype_storage_bytes(o.dtype, numel));
  long double need = 2 * stored;  // expected.<out> and the actual output
  if (o.touched.empty())
    need += 8 * n;  // expected_f64 as doubles
  else
    need += stored + 24 * n;            // the initial contents, the touched indices and written elements
  if (!o.bound.empty()) need += 4 * n;  // F32 (format 4; BF16 takes half)
  if (need > static_cast<long double>(budget))
    throw std::runtime_error(golden.path() + ": tensor '" + o.expected + "' (" +
                             std::string(dtype_name(o.dtype)) + " " + shape_string(o.shape) +
                             "): checking output '" + o.name + "' needs about " +
                             std::to_string(static_cast<unsigned long long>(need)) +
                             " bytes of memory, over " + budget_text(budget) + "; nothing was read");
}

std::vector<uint8_t> read_checked(const SafetensorsReader& file, const std::string& key,
                                  const std::string& dtype, const Shape& shape, const std::string& note) {
  const TensorEntry* e = file.find(key);
  if (!e) throw std::runtime_error(file.path() + " has no tensor '" + key + "'");
  if (e->dtype != dtype)
    throw std::runtime_error(file.path() + ": tensor '" + key + "' has dtype " + e->dtype + ", expected " +
                             dtype + note);
  if (e->shape != shape)
    throw std::runtime_error(file.path() + ": tensor '" + key + "' has shape " + shape_string(e->shape) +
                             ", expected " + shape_string(shape));
  const uint64_t bytes = e->end - e->begin, budget = golden_memory_budget();
  if (bytes > budget)
    throw std::runtime_error(file.path() + ": tensor '" + key + "' holds " + std::to_string(bytes) +
                             " bytes, over " + budget_text(budget) + "; nothing was read");
  try {
    return file.read(*e);
  } catch (const std::bad_alloc&) {
    throw_no_memory(file.path(), key, bytes);
  }
}

Tensor load_tensor(const SafetensorsReader& file, const std::string& key, const ManifestTensor& o) {
  const std::string note = dtype_bits(o.dtype) == 4 ? " (" + packing_name(o.dtype) + ")" : "";
  std::vector<uint8_t> bytes =
      read_checked(file, key, safetensors_dtype(o.dtype), stored_shape(o.dtype, o.shape), note);
  Tensor t;
  try {
    t = Tensor(o.name, o.dtype, o.shape, o.role);
  } catch (const std::bad_alloc&) {
    throw_no_memory(file.path(), key, bytes.size());
  }
  if (bytes.size() != t.bytes().size())  // cannot happen once dtype and shape match; kept as a guard
    throw std::runtime_error(file.path() + ": tensor '" + key + "' holds " + std::to_string(bytes.size()) +
                             " bytes, expected " + std::to_string(t.bytes().size()));
  t.bytes() = std::move(bytes);
  return t;
}

namespace {

// Doubles stored as F64 (format 1), or in format 2 as F64, F32, F16 or BF16 (widened).
std::vector<double> load_f64(const SafetensorsReader& file, const std::string& key, const Shape& shape,
                             int format) {
  const TensorEntry* e = file.find(key);
  for (DType narrow : {DType::f16, DType::bf16, DType::f32})
    if (format >= 2 && e && e->dtype == safetensors_dtype(narrow)) {
      std::vector<uint8_t> bytes = read_checked(file, key, e->dtype, shape);
      try {
        Tensor t(key, narrow, shape, Role::output);
        t.bytes() = std::move(bytes);
        return t.values();
      } catch (const std::bad_alloc&) {
        throw_no_memory(file.path(), key, e->end - e->begin);
      }
    }
  const std::vector<uint8_t> bytes =
      read_checked(file, key, "F64", shape, format >= 2 ? " (or F32, F16, BF16)" : "");
  std::vector<double> v(bytes.size() / 8);
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * 8);
  return v;
}

// The flat indices where the operator writes: one byte (0 or 1) per element (format 1), or
// one bit per element, little-endian within each byte (format 2).
std::vector<uint64_t> load_touched(const SafetensorsReader& file, const std::string& key, const Shape& shape,
                                   int format) {
  const size_t n = shape_numel(shape);
  std::vector<uint64_t> touched;
  if (format >= 2) {
    const std::vector<uint8_t> bits =
        read_checked(file, key, "U8", {static_cast<int64_t>((n + 7) / 8)}, " (one bit per element)");
    if (n % 8 && bits.back() >> (n % 8))
      throw std::runtime_error(file.path() + ": tensor '" + key + "' has bits set past its " +
                               std::to_string(n) + " elements");
    for (size_t byte = 0; byte < bits.size(); ++byte)
      for (unsigned b = 0; bits[byte] >> b; ++b)
        if ((bits[byte] >> b) & 1u) touched.push_back(byte * 8 + b);
    return touched;
  }
  const std::vector<uint8_t> t = read_checked(file, key, "U8", shape);
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] > 1)
      throw std::runtime_error(file.path() + ": tensor '" + key + "' holds " + std::to_string(t[i]) + " at " +
                               index_string(shape, static_cast<int64_t>(i)) + " (must be 0 or 1)");
    if (t[i]) touched.push_back(i);
  }
  return touched;
}

// A one-dimensional I64 tensor of flat indices into an output of n elements: they must
// ascend, each within [0, n) (format 2's alternate indices, format 4's NaN permissions).
std::vector<int64_t> ascending_indices(const SafetensorsReader& file, const std::string& key, size_t n) {
  const TensorEntry* e = file.find(key);
  if (!e) throw std::runtime_error(file.path() + " has no tensor '" + key + "'");
  if (e->shape.size() != 1)
    throw std::runtime_error(file.path() + ": tensor '" + key + "' must be one-dimensional");
  const std::vector<uint8_t> raw = read_checked(file, key, "I64", e->shape);
  std::vector<int64_t> indices(raw.size() / 8);
  int64_t previous = -1;
  for (size_t k = 0; k < indices.size(); ++k) {
    int64_t i;
    std::memcpy(&i, raw.data() + 8 * k, 8);
    if (i <= previous || i >= static_cast<int64_t>(n))
      throw std::runtime_error(file.path() + ": tensor '" + key + "' holds " + std::to_string(i) + " at " +
                               std::to_string(k) + ": indices must ascend within [0, " + std::to_string(n) +
                               ")");
    indices[k] = previous = i;
  }
  return indices;
}

// Format 2's sparse alternates: values at ascending, distinct flat indices inside the tensor.
std::vector<Alternate> load_sparse_alternates(const SafetensorsReader& file, const ManifestOutput& o,
                                              size_t n) {
  const std::vector<int64_t> indices = ascending_indices(file, o.alternate_index, n);
  const std::vector<double> values = load_f64(file, o.alternate, {static_cast<int64_t>(indices.size())}, 2);
  std::vector<Alternate> alternates;
  for (size_t k = 0; k < values.size(); ++k)
    if (!std::isnan(values[k])) alternates.push_back({static_cast<uint64_t>(indices[k]), values[k]});
  return alternates;
}

}  // namespace

Expected load_expected(const SafetensorsReader& golden, const ManifestOutput& out, int format, Tensor value) {
  const size_t n = value.numel();
  Expected e;
  if (!out.touched.empty()) {
    const std::vector<uint64_t> touched = load_touched(golden, out.touched, out.shape, format);
    std::vector<WrittenElement> written(touched.size());
    if (format >= 2) {  // expected_f64 at the touched elements only
      const std::vector<double> exact =
          load_f64(golden, out.expected_f64, {static_cast<int64_t>(touched.size())}, 2);
      for (size_t k = 0; k < touched.size(); ++k) written[k] = {touched[k], exact[k]};
    } else {
      const std::vector<double> exact = load_f64(golden, out.expected_f64, out.shape, format);
      for (size_t k = 0; k < touched.size(); ++k) written[k] = {touched[k], exact[touched[k]]};
    }
    e = Expected::in_place(std::move(value), std::move(written));
  } else {
    e = Expected::plain(std::move(value), load_f64(golden, out.expected_f64, out.shape, format));
  }
  if (!out.alternate.empty()) {
    if (format >= 2) {
      for (const Alternate& a : load_sparse_alternates(golden, out, n)) e.set_alternate(a.index, a.value);
    } else {
      const std::vector<double> dense = load_f64(golden, out.alternate, out.shape, format);
      for (size_t i = 0; i < dense.size(); ++i) e.set_alternate(i, dense[i]);
    }
  }
  if (!out.bound.empty()) {  // format 4: F32; format 5: BF16 (only that one: the other is refused)
    const bool bf16 = format >= 5;
    const std::vector<uint8_t> bytes = read_checked(golden, out.bound, bf16 ? "BF16" : "F32", out.shape,
                                                    bf16 ? " (golden format 5)" : " (golden format 4)");
    std::vector<float> bound;
    std::vector<uint16_t> bits;
    if (bf16) {
      bits.resize(n);
      if (n) std::memcpy(bits.data(), bytes.data(), n * 2);
    } else {
      bound.resize(n);
      if (n) std::memcpy(bound.data(), bytes.data(), n * 4);
    }
    for (size_t i = 0; i < n; ++i) {
      const float b = bf16 ? bf16_widened(bits[i]) : bound[i];
      if (!(b >= 0))  // NaN or negative
        throw std::runtime_error(golden.path() + ": tensor '" + out.bound + "' holds " + std::to_string(b) +
                                 " at " + index_string(out.shape, static_cast<int64_t>(i)) +
                                 " (a bound is a non-negative number)");
    }
    e.tensor = out.name;
    if (bf16)
      e.set_bound_bf16(std::move(bits));
    else
      e.set_bound(std::move(bound));
  }
  if (!out.nan_permitted.empty())
    for (int64_t i : ascending_indices(golden, out.nan_permitted, n)) e.permit_nan(static_cast<size_t>(i));
  e.finish();
  e.tensor = out.name;
  // A golden no output can fail (an infinite bound or a NaN permitted at every element) is no
  // test: `kvbench golden` refuses to write one, and a reader refuses to judge by one.
  if (const auto vacuous = accepts_any_output(e))
    throw std::runtime_error(golden.path() + ": tensors '" + out.bound + "'" +
                             (out.nan_permitted.empty() ? "" : " and '" + out.nan_permitted + "'") + ": " +
                             *vacuous);
  return e;
}

}  // namespace kvbench
