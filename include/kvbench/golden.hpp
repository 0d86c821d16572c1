#pragma once
// kvbench's golden files in a C++ test suite: one case that `kvbench golden` wrote, with its
// inputs, expected outputs, tolerances and attributes (specs/golden-format.md,
// specs/cpp-library.md). Link kvbench::golden (find_package(kvbench CONFIG) or pkg-config
// kvbench-golden); C++20 and the standard library are all this header needs.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace kvbench {

struct ArrayAccess;
struct GoldenAccess;

// One tensor of a case in its own dtype and row-major shape.
class Array {
 public:
  Array();
  ~Array();
  Array(const Array&);
  Array& operator=(const Array&);
  Array(Array&&) noexcept;
  Array& operator=(Array&&) noexcept;

  const std::string& name() const;
  // kvbench's dtype name: f64 f32 f16 bf16 s64 s32 s16 s8 u8 s4 u4 f4e2m1 f4e1m2 f8e8m0 ...
  std::string dtype() const;
  const std::vector<int64_t>& shape() const;
  size_t size() const;  // the element count
  // Element `flat` (row-major) as a double: exact for every dtype.
  double get(size_t flat) const;
  // Stores `value` in the dtype: floats round to nearest even; an integer dtype needs an
  // integer in its range (std::logic_error otherwise).
  void set(size_t flat, double value);
  std::vector<double> values() const;
  void set_values(std::span<const double> values);  // one value per element
  // The elements as a device stores them: little-endian; s4, u4 and the FP4 formats two a
  // byte, the even flat index in the low nibble.
  std::span<const uint8_t> bytes() const;
  std::span<uint8_t> bytes();

 private:
  friend struct ArrayAccess;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class Golden {
 public:
  // Reads a case's manifest (<stem>.json) and its data (<stem>.safetensors), verifying the
  // checksum of every tensor (golden format 3 and later). Throws std::runtime_error naming
  // the file, and the JSON pointer or tensor at fault.
  static Golden load(const std::string& manifest_path);
  ~Golden();
  Golden(Golden&&) noexcept;
  Golden& operator=(Golden&&) noexcept;

  const std::string& name() const;    // the expanded case name
  const std::string& op() const;      // the operator id, e.g. pmx.KeyValueCache
  const std::string& source() const;  // the case file it was expanded from
  const std::string& path() const;    // the manifest

  std::vector<std::string> inputs() const;            // input tensors, in the manifest's order
  std::vector<std::string> outputs() const;           // outputs, plain and in-place
  bool is_in_place(const std::string& output) const;  // read and written, like a KV cache
  const Array& input(const std::string& name) const;  // std::out_of_range for another name
  Array expected(const std::string& output) const;    // the golden, in the output's dtype
  // A buffer for an implementation to write `output` into: an in-place output's contents
  // before the operator (the elements it must not touch keep them), a plain output's
  // elements poisoned (NaN, or a code no golden holds) so that one left unwritten fails.
  Array output(const std::string& output) const;
  // "|a-g| <= atol 0.001 + rtol 0.001 * |golden|", "exact (atol = rtol = 0)", or "the
  // golden's per-element bound" (the attention outputs, formats 4 and 5).
  std::string tolerance(const std::string& output) const;

  // The case as it ran: attributes with their defaults, named sizes, dtypes (each section's
  // JSON text); and single values. std::out_of_range for a name the case does not have,
  // std::invalid_argument for a value of another type.
  std::string attributes_json() const;
  std::string shapes_json() const;
  bool has_attribute(const std::string& name) const;
  double number(const std::string& attribute) const;     // a number, or a boolean as 0/1
  std::string text(const std::string& attribute) const;  // a string
  int64_t size(const std::string& shape_name) const;     // e.g. size("num_heads")

  // `kvbench run '<case file>' --filter '^<case>$'`: the command that shows this case.
  std::string repro() const;

 private:
  friend struct GoldenAccess;
  struct Impl;
  explicit Golden(std::unique_ptr<Impl>);
  std::unique_ptr<Impl> impl_;
};

// `value` rounded to a float dtype (nearest even: f32, f16, bf16, f64), or an integer one's
// value checked (std::logic_error where it is not one): the rounding steps an operator's
// definition names, for a reference written against a golden.
double round_to(const std::string& dtype, double value);

// The case manifests in a golden folder (`kvbench golden -o DIR`), sorted. Throws
// std::runtime_error naming the first file that is not a usable manifest.
std::vector<std::string> golden_manifests(const std::string& folder);

}  // namespace kvbench
