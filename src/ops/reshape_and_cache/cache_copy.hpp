#pragma once
// What the two ReshapeAndCache operators share: the key/value and cache tensors, the
// golden of a pure copy into the caches, and the memory figures.
#include <cstdint>
#include <string>
#include <vector>

#include "ops/operator.hpp"

namespace kvbench {

// One row copy: head_size elements from key/value row `src` to cache row `dst`.
struct RowCopy {
  int64_t src, dst;
};

// key, value (uniform in [-1, 1)), key_cache, value_cache (in place, uniform in [-2, 2)
// so that an unwritten slot can never look written), all of the dtype of key.
std::vector<TensorDecl> cache_copy_tensors(const std::string& input_shape, const std::string& cache_shape);

// A case that copies rows of key/value into the caches.
class CacheCopyCase : public OpCase {
 public:
  CacheCopyCase(Args a, DType dtype, int64_t head_size)
      : OpCase(std::move(a)), dtype_(dtype), head_size_(head_size) {}
  // The copies the operator makes, in any order.
  virtual std::vector<RowCopy> copies() const = 0;
  // How many rows it copies into each cache (copies().size(), from the parameters alone).
  virtual int64_t stored_rows() const = 0;

  void fill(Tensor& t) const override;
  // The golden caches: initial contents with every copied row replaced and marked touched.
  std::vector<Expected> reference(const TensorSet& in) const override;
  // Key and value read for every token, and the copied rows written to both caches.
  double traffic_bytes(const TensorSet& io) const override;
  long double written_elements(const TensorSpec&) const override {
    return static_cast<long double>(stored_rows()) * static_cast<long double>(head_size_);
  }

 protected:
  // Tokens stored vs uncompressed, bytes saved and the ratio, for the report.
  CaseFigures memory_figures(int64_t stored_rows, int64_t uncompressed_rows) const;
  DType dtype_;
  int64_t head_size_;
};

}  // namespace kvbench
