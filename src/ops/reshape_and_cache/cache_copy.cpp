#include "ops/reshape_and_cache/cache_copy.hpp"

#include <algorithm>
#include <cstdio>

#include "ref/quant.hpp"

namespace kvbench {

std::vector<TensorDecl> cache_copy_tensors(const std::string& input_shape, const std::string& cache_shape) {
  return {
      {.name = "key",
       .shape = input_shape,
       .choices = {DType::f16, DType::bf16, DType::f32},
       .dtype_rule = "f16 (default), bf16 or f32",
       .range = {{-1, 1}}},
      {.name = "value",
       .shape = input_shape,
       .choices = {DType::f16, DType::bf16, DType::f32},
       .dtype_rule = "= key",
       .range = {{-1, 1}}},
      {.name = "key_cache",
       .role = Role::inplace,
       .shape = cache_shape,
       .choices = {DType::f16, DType::bf16, DType::f32},
       .dtype_rule = "= key",
       .doc = "starts uniform in [-2, 2)"},
      {.name = "value_cache",
       .role = Role::inplace,
       .shape = cache_shape,
       .choices = {DType::f16, DType::bf16, DType::f32},
       .dtype_rule = "= key",
       .doc = "starts uniform in [-2, 2)"},
  };
}

void CacheCopyCase::fill(Tensor& t) const {
  if (t.role() == Role::inplace) return fill_uniform(t, {-2, 2});
  OpCase::fill(t);
}

std::vector<Expected> CacheCopyCase::reference(const TensorSet& in) const {
  std::vector<Expected> out;
  // In the cache's order, so that the written records ascend and need no sorting (a slot
  // written twice is still refused by finish()).
  auto rows = copies();
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.dst < b.dst; });
  if (!fault().empty()) {
    // A faulty kernel's copies may collide (the later one wins) or fall past the cache (lost).
    const auto cache_rows = static_cast<int64_t>(in.at("key_cache").numel()) / head_size_;
    std::vector<RowCopy> kept;
    for (size_t i = 0; i < rows.size(); ++i)
      if (rows[i].dst < cache_rows && (i + 1 == rows.size() || rows[i + 1].dst != rows[i].dst))
        kept.push_back(rows[i]);
    rows = std::move(kept);
  }
  for (const char* name : {"key", "value"}) {
    // key_value_swapped: the key rows go to value_cache and the value rows to key_cache.
    const Tensor& src =
        in.at(fault_is("key_value_swapped") ? (std::string(name) == "key" ? "value" : "key") : name);
    Expected e = Expected::unchanged(in.at(std::string(name) + "_cache"));
    std::vector<double> row(static_cast<size_t>(head_size_));
    e.reserve_writes(rows.size() * row.size());
    for (const auto& r : rows) {
      src.get_range(static_cast<size_t>(r.src * head_size_), row.size(), row.data());
      if (fault_is("copy_through_f16")) {
        round_span(DType::f16, row.data(), row.size());
        round_span(dtype_, row.data(), row.size());  // and back to the cache's dtype
      }
      e.write_row(static_cast<size_t>(r.dst * head_size_), row.size(), row.data(), row.data());
    }
    e.finish();
    out.push_back(std::move(e));
  }
  return out;
}

double CacheCopyCase::traffic_bytes(const TensorSet& io) const {
  const double row = static_cast<double>(head_size_) * dtype_bits(dtype_) / 8;
  const double read = static_cast<double>(io.at("key").numel()) / static_cast<double>(head_size_);
  return 2 * row * (read + static_cast<double>(stored_rows()));
}

CaseFigures CacheCopyCase::memory_figures(int64_t stored, int64_t uncompressed) const {
  const double row_bytes = 2.0 * static_cast<double>(head_size_) * dtype_bits(dtype_) / 8;  // key + value
  char saved[32], ratio[32];
  std::snprintf(saved, sizeof saved, "%.1f KiB",
                static_cast<double>(uncompressed - stored) * row_bytes / 1024);
  std::snprintf(ratio, sizeof ratio, "%.2fx",
                stored ? static_cast<double>(uncompressed) / static_cast<double>(stored) : 0.0);
  return {{"stored", std::to_string(stored) + "/" + std::to_string(uncompressed) + " token rows"},
          {"saved", saved},
          {"ratio", ratio}};
}

}  // namespace kvbench
