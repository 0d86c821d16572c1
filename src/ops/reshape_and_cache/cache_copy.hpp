#pragma once
// What the two ReshapeAndCache operators share: generated key/value and caches, the
// golden of a pure copy into the caches, the Vulkan buffers, and the memory figures.
#include <cstdint>
#include <string>
#include <vector>

#include "cases/case_def.hpp"
#include "ops/operator.hpp"

namespace kvbench {

// One row copy: head_size elements from key/value row `src` to cache row `dst`.
struct RowCopy {
  int64_t src, dst;
};

// key/value (Shape `input`) uniform in [-1, 1), caches (Shape `cache`) uniform in [-2, 2),
// so that an unwritten slot can never look written.
TensorSet make_cache_copy_tensors(const CaseDef& c, DType dtype, const Shape& input, const Shape& cache);

// The golden caches: initial contents with every copied row replaced and marked touched.
std::vector<Expected> cache_copy_reference(const CaseDef& c, const TensorSet& in, const std::vector<RowCopy>& rows,
                                           int64_t head_size);

// Tokens stored vs uncompressed, bytes saved and the ratio, for the report.
CaseFigures memory_figures(int64_t stored_rows, int64_t uncompressed_rows, int64_t head_size, DType dtype);

}  // namespace kvbench
