#pragma once
// A host tensor: name, dtype, shape, role, and its bytes exactly as a device stores them.
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace kvbench {

// input: read by the operator. output: written by it (poisoned before each dispatch).
// inplace: read and written, like a KV cache; compared whole after the dispatch, and the
// elements the operator must not touch must keep their initial bits.
enum class Role { input, output, inplace };
const char* role_name(Role r);

using Shape = std::vector<int64_t>;
// The element count; std::length_error for a negative dimension or a count past size_t.
size_t shape_numel(const Shape& shape);
std::string shape_string(const Shape& shape);

class Tensor {
 public:
  Tensor() = default;
  Tensor(std::string name, DType dtype, Shape shape, Role role);
  // A tensor described but not allocated: name, dtype, shape, role and numel only, no
  // bytes (for a golden's outputs, whose data is the reference's).
  static Tensor unallocated(std::string name, DType dtype, Shape shape, Role role);

  const std::string& name() const { return name_; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  Role role() const { return role_; }
  size_t numel() const { return numel_; }
  std::vector<uint8_t>& bytes() { return bytes_; }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

  // The element's value as a double (exact for every dtype but i64 beyond 2^53).
  double get(size_t i) const;
  // Stores v, rounding to nearest-even for float dtypes. Integer dtypes require v to be an
  // integer within the dtype's range (anything else is a bug in the caller: it throws).
  void set(size_t i, double v);
  // Elements [begin, begin + n) read into / stored from doubles as get()/set() would, with
  // one dtype dispatch for the range (the golden path's bulk access). Packed s4/u4 ranges
  // must start at an even element when several threads store disjoint ranges at once.
  void get_range(size_t begin, size_t n, double* out) const;
  void set_range(size_t begin, size_t n, const double* in);
  // Every element as a double (get_range over the whole tensor).
  std::vector<double> values() const {
    std::vector<double> v(numel_);
    get_range(0, numel_, v.data());
    return v;
  }
  // The element's raw bits (zero-extended), for bit-exact comparison.
  uint64_t bits(size_t i) const;
  void set_bits(size_t i, uint64_t bits);
  // Row-major flat index of a multi-index.
  size_t offset(std::initializer_list<int64_t> index) const;

 private:
  std::string name_;
  DType dtype_ = DType::f32;
  Shape shape_;
  Role role_ = Role::input;
  size_t numel_ = 0;
  std::vector<uint8_t> bytes_;
};

}  // namespace kvbench
