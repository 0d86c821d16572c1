#include "inputs/file_inputs.hpp"

#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <tuple>

#include "cases/case_def.hpp"
#include "cases/schema.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "golden/safetensors.hpp"
#include "inputs/sha256.hpp"

namespace kvbench {
namespace fs = std::filesystem;

namespace {

// Whether `inner` is `root` or lies below it (both normalized, absolute).
bool within(const fs::path& root, const fs::path& inner) {
  auto r = root.begin(), i = inner.begin();
  for (; r != root.end(); ++r, ++i) {
    if (r->empty()) continue;  // a trailing separator
    if (i == inner.end() || *r != *i) return false;
  }
  return true;
}

// The file and its tensor entry; a file that cannot be read or holds no such tensor is a
// CaseError at <pointer>/file or /tensor.
struct Opened {
  std::unique_ptr<RegularFile> file;
  TensorFileEntry entry;
};
Opened open_source(const FileSource& s) {
  Opened o;
  try {
    o.file = std::make_unique<RegularFile>(s.path);
    o.entry = read_tensor_entry(*o.file, s.tensor);
  } catch (const TensorFileError& e) {
    throw CaseError(s.pointer + (e.fault() == FileFault::tensor ? "/tensor" : "/file"),
                    s.written + ": " + e.what());
  } catch (const FileError& e) {
    throw CaseError(s.pointer + "/file",
                    "cannot read " + s.written + ": " + (e.reason().empty() ? e.what() : e.reason()));
  }
  return o;
}

std::string type_and_shape(const std::string& type, const Shape& shape) {
  return type + " " + shape_string(shape);
}

// Process-wide: a sweep around one file (or a suite of cases sharing a dump) reads it once.
std::mutex cache_lock;
std::map<std::tuple<std::string, uint64_t, int64_t>, std::string> digests;
std::map<std::tuple<std::string, uint64_t, int64_t, uint64_t, uint64_t, int>, std::pair<uint64_t, uint64_t>>
    counts;

std::string file_digest(const RegularFile& file) {
  const auto key = std::make_tuple(file.path(), file.size(), file.modified_ns());
  {
    std::lock_guard lock(cache_lock);
    if (auto it = digests.find(key); it != digests.end()) return it->second;
  }
  Sha256 h;
  file.scan(0, file.size(), [&](std::span<const uint8_t> b) { h.update(b); });
  const std::string hex = h.hex();
  std::lock_guard lock(cache_lock);
  return digests[key] = hex;
}

// NaN and Inf of a float tensor; for bool, a byte other than 0 and 1 is an error, and so is
// a byte of 64 or more for the 6-bit floats (one code a byte); HiF8's NaN is 0x80 and its
// infinities 0x6F / 0xEF. FP4 has
// neither NaN nor Inf (and no whole byte per element); E8M0's one NaN is 0xFF; E4M3FN has
// no infinity, and its one NaN magnitude is 0x7F (exponent all ones is a finite binade).
std::pair<uint64_t, uint64_t> scan_values(const FileSource& s, const RegularFile& file,
                                          const TensorFileEntry& e, DType dtype) {
  if ((!dtype_is_float(dtype) && dtype != DType::boolean) || dtype_bits(dtype) < 8) return {0, 0};
  const auto key = std::make_tuple(file.path(), file.size(), file.modified_ns(), e.offset, e.bytes,
                                   static_cast<int>(dtype));
  {
    std::lock_guard lock(cache_lock);
    if (auto it = counts.find(key); it != counts.end()) return it->second;
  }
  uint64_t nan = 0, inf = 0, index = 0, bad_bool = UINT64_MAX;
  uint8_t bad_value = 0;
  const size_t width = dtype_bits(dtype) / 8;
  // Exponent all ones: Inf with a zero mantissa, else NaN.
  // E4M3FN as a format whose "exponent" is all seven bits and has no mantissa left for Inf.
  const uint32_t exp_mask = dtype == DType::f16        ? 0x7c00u
                            : dtype == DType::bf16     ? 0x7f80u
                            : dtype == DType::f8e8m0   ? 0xffu
                            : dtype == DType::f8e4m3fn ? 0x7fu
                            : dtype == DType::f8e5m2   ? 0x7cu
                                                       : 0x7f800000u;
  const uint32_t man_mask = dtype == DType::f16        ? 0x03ffu
                            : dtype == DType::bf16     ? 0x007fu
                            : dtype == DType::f8e8m0   ? 0xffu
                            : dtype == DType::f8e4m3fn ? 0x7fu
                            : dtype == DType::f8e5m2   ? 0x03u
                                                       : 0x007fffffu;
  std::vector<uint8_t> carry;  // an element split between two windows
  file.scan(e.offset, e.bytes, [&](std::span<const uint8_t> b) {
    size_t at = 0;
    auto take = [&](const uint8_t* p) {
      if (dtype == DType::boolean || dtype == DType::f6e2m3 || dtype == DType::f6e3m2) {
        // A bool above 1, or a 6-bit float's byte with bit 6 or 7 set, holds no value.
        if (*p > (dtype == DType::boolean ? 1 : 0x3F) && bad_bool == UINT64_MAX)
          bad_bool = index, bad_value = *p;
      } else if (dtype == DType::hifloat8) {  // 0x80 the only NaN, 0x6F / 0xEF the infinities
        if (*p == 0x80) ++nan;
        if ((*p & 0x7Fu) == 0x6Fu) ++inf;
      } else {
        uint32_t bits = 0;
        std::memcpy(&bits, p, width);  // little-endian host
        if ((bits & exp_mask) == exp_mask) ++((bits & man_mask) ? nan : inf);
      }
      ++index;
    };
    if (!carry.empty()) {
      while (carry.size() < width && at < b.size()) carry.push_back(b[at++]);
      if (carry.size() == width) take(carry.data()), carry.clear();
    }
    for (; at + width <= b.size(); at += width) take(b.data() + at);
    carry.insert(carry.end(), b.begin() + static_cast<std::ptrdiff_t>(at), b.end());
  });
  if (bad_bool != UINT64_MAX)
    throw CaseError(
        s.pointer,
        s.written + ": element " + std::to_string(bad_bool) + " of the " + std::string(dtype_name(dtype)) +
            " tensor holds " + std::to_string(bad_value) +
            (dtype == DType::boolean ? ": a bool is 0 or 1" : ": a 6-bit float code is a byte below 64"));
  std::lock_guard lock(cache_lock);
  return counts[key] = {nan, inf};
}

int64_t read_integer(const uint8_t* p, DType dtype) {
  switch (dtype) {
    case DType::i8: return static_cast<int8_t>(*p);
    case DType::u8: return *p;
    case DType::i32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

}  // namespace

FileSource parse_file_source(const CaseDef& def, const std::string& key, const nlohmann::json& value,
                             bool allow_outside) {
  FileSource s;
  s.key = key;
  s.pointer = def.locate("/inputs/" + pointer_token(key));
  s.written = value.at("file").get<std::string>();
  s.tensor = value.value("tensor", "");
  if (value.contains("dtype")) s.dtype = parse_dtype(value["dtype"].get<std::string>());
  const fs::path folder = fs::path(def.file).parent_path();
  const fs::path written(s.written);
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(fs::absolute(folder.empty() ? fs::path(".") : folder, ec), ec);
  const fs::path target =
      fs::weakly_canonical(fs::absolute(written.is_absolute() ? written : folder / written, ec), ec);
  if (ec) throw CaseError(s.pointer + "/file", "cannot resolve " + s.written + ": " + ec.message());
  if (!allow_outside && !within(root, target))
    throw CaseError(s.pointer + "/file", "'" + s.written + "' is " + target.string() +
                                             ", outside the case file's folder " + root.string() +
                                             ": a case file reads files in its own folder tree only "
                                             "(--allow-outside-paths lifts this; specs/case-format.md)");
  s.path = target.string();
  return s;
}

std::vector<int64_t> read_index_values(const FileSource& s, uint64_t max_count) {
  if (s.dtype)
    throw CaseError(s.pointer + "/dtype",
                    "an index parameter's file is read as the integers it holds: no \"dtype\"");
  Opened o = open_source(s);
  const TensorFileEntry& e = o.entry;
  const bool integer = e.dtype && (*e.dtype == DType::i8 || *e.dtype == DType::u8 || *e.dtype == DType::i32 ||
                                   *e.dtype == DType::i64);
  if (!integer)
    throw CaseError(s.pointer, s.written + " holds " + entry_type_name(e) + ": the values of " + s.key +
                                   " are integers (i8, u8, i32 or i64)");
  if (e.shape.size() > 1)
    throw CaseError(s.pointer, s.written + " is " + shape_string(e.shape) + ": the values of " + s.key +
                                   " are one-dimensional");
  const uint64_t n = shape_numel(e.shape);
  if (n > max_count)
    throw CaseError(s.pointer, s.written + " holds " + std::to_string(n) + " values of " + s.key +
                                   "; at most " + std::to_string(max_count) +
                                   " fit the memory budget (--memory-budget)");
  std::vector<uint8_t> bytes(e.bytes);
  try {
    o.file->read_at(e.offset, bytes);
  } catch (const FileError& err) {
    throw CaseError(s.pointer + "/file", s.written + ": " + err.what());
  }
  std::vector<int64_t> values(n);
  const size_t width = static_cast<size_t>(e.bits / 8);
  for (uint64_t i = 0; i < n; ++i) values[i] = read_integer(bytes.data() + i * width, *e.dtype);
  return values;
}

FileInput check_file_input(const FileSource& s, const std::optional<TensorExpectation>& expected) {
  Opened o = open_source(s);
  FileInput f{.source = s,
              .tensor = expected,
              .entry = o.entry,
              .file_size = o.file->size(),
              .modified_ns = o.file->modified_ns()};
  const TensorFileEntry& e = f.entry;
  if (expected) {
    const bool packed = s.dtype && dtype_bits(*s.dtype) == 4;
    if (s.dtype && !(packed ? e.bits == 8 : dtype_bits(*s.dtype) == e.bits))
      throw CaseError(s.pointer + "/dtype",
                      std::string("\"dtype\": \"") + std::string(dtype_name(*s.dtype)) + "\" reads " +
                          (packed ? "bytes of two packed elements"
                                  : std::to_string(dtype_bits(*s.dtype)) + "-bit elements") +
                          "; the file's are " + e.stored + " (" + std::to_string(e.bits) + "-bit)");
    if (!s.dtype && !e.dtype)
      throw CaseError(s.pointer,
                      s.written + " holds " + entry_type_name(e) +
                          ": say which dtype they are with \"dtype\" (bf16 or f16 for numpy's uint16 form)");
    // FLOAT8_E8M0 has no numpy or safetensors dtype: its bytes come as U8, as the golden
    // files store them, and are read as this case's f8e8m0 without a "dtype".
    const bool e8m0_bytes = !s.dtype && *e.dtype == DType::u8 && expected->dtype == DType::f8e8m0;
    const DType as = s.dtype ? *s.dtype : e8m0_bytes ? DType::f8e8m0 : *e.dtype;
    // s4/u4 come as the golden files store them: U8 bytes of two elements, shape [ceil(n / 2)].
    const Shape want = packed ? stored_shape(expected->dtype, expected->shape) : expected->shape;
    if (as != expected->dtype || e.shape != want)
      throw CaseError(s.pointer, s.written + (s.tensor.empty() ? "" : ":" + s.tensor) + " is " +
                                     type_and_shape(std::string(dtype_name(as)), e.shape) + "; this case's " +
                                     s.key + " is " +
                                     type_and_shape(std::string(dtype_name(expected->dtype)), want) +
                                     (packed ? " (packed two per byte)" : ""));
    std::tie(f.nan, f.inf) = scan_values(s, *o.file, e, as);
  }
  f.sha256 = file_digest(*o.file);
  return f;
}

void load_file_input(const FileInput& f, Tensor& t) {
  const RegularFile file(f.source.path);
  if (file.size() != f.file_size || file.modified_ns() != f.modified_ns)
    throw std::runtime_error(f.source.written +
                             " changed after its case was checked (size or modification time): run again");
  if (t.bytes().size() != f.entry.bytes)
    throw std::logic_error("file input " + f.source.key + ": " + std::to_string(f.entry.bytes) +
                           " bytes for a tensor of " + std::to_string(t.bytes().size()));
  file.read_at(f.entry.offset, t.bytes());
}

std::string describe_file_inputs(const std::vector<FileInput>& files) {
  std::string s;
  for (const auto& f : files) {
    s += (s.empty() ? " | from files: " : ", ") + f.source.key + "=" + f.source.written;
    if (!f.source.tensor.empty()) s += ":" + f.source.tensor;
    if (f.nan || f.inf) s += " (" + std::to_string(f.nan) + " NaN, " + std::to_string(f.inf) + " Inf)";
  }
  return s;
}

nlohmann::json file_inputs_json(const std::vector<FileInput>& files) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& f : files) {
    nlohmann::json e{{"file", f.source.written}, {"sha256", f.sha256}, {"bytes", f.file_size}};
    if (!f.source.tensor.empty()) e["tensor"] = f.source.tensor;
    if (f.source.dtype) e["dtype"] = dtype_name(*f.source.dtype);
    if (f.tensor) {
      e["nan"] = f.nan;
      e["inf"] = f.inf;
    }
    j[f.source.key] = e;
  }
  return j;
}

}  // namespace kvbench
