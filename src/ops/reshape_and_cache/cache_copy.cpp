#include "ops/reshape_and_cache/cache_copy.hpp"

#include <cstdio>

#include "core/rng.hpp"

namespace kvbench {

TensorSet make_cache_copy_tensors(const CaseDef& c, DType dtype, const Shape& input, const Shape& cache) {
  TensorSet ts;
  for (const char* name : {"key", "value"}) {
    Tensor t(name, dtype, input, Role::input);
    const auto r = c.range(name, {-1, 1});
    const CounterRng rng(c.seed, name);
    for (size_t i = 0; i < t.numel(); ++i) t.set(i, rng.uniform(i, r.first, r.second));
    ts.tensors.push_back(std::move(t));
  }
  for (const char* name : {"key_cache", "value_cache"}) {
    Tensor t(name, dtype, cache, Role::inplace);
    const CounterRng rng(c.seed, name);
    for (size_t i = 0; i < t.numel(); ++i) t.set(i, rng.uniform(i, -2, 2));
    ts.tensors.push_back(std::move(t));
  }
  return ts;
}

std::vector<Expected> cache_copy_reference(const CaseDef& c, const TensorSet& in, const std::vector<RowCopy>& rows,
                                           int64_t head_size) {
  std::vector<Expected> out;
  for (const char* name : {"key", "value"}) {
    const Tensor& src = in.at(name);
    const std::string cache_name = std::string(name) + "_cache";
    Expected e = expect_unchanged(in.at(cache_name), c.tolerance(cache_name, {}));
    for (const auto& r : rows)
      for (int64_t d = 0; d < head_size; ++d) {
        const size_t to = static_cast<size_t>(r.dst * head_size + d);
        e.value[to] = e.exact[to] = src.get(static_cast<size_t>(r.src * head_size + d));
        e.touched[to] = 1;
      }
    out.push_back(std::move(e));
  }
  return out;
}

CaseFigures memory_figures(int64_t stored, int64_t uncompressed, int64_t head_size, DType dtype) {
  const double row_bytes = 2.0 * static_cast<double>(head_size) * dtype_bits(dtype) / 8;  // key + value
  char saved[32], ratio[32];
  std::snprintf(saved, sizeof saved, "%.1f KiB", static_cast<double>(uncompressed - stored) * row_bytes / 1024);
  std::snprintf(ratio, sizeof ratio, "%.2fx", stored ? static_cast<double>(uncompressed) / static_cast<double>(stored) : 0.0);
  return {{"stored", std::to_string(stored) + "/" + std::to_string(uncompressed) + " token rows"},
          {"saved", saved},
          {"ratio", ratio}};
}

}  // namespace kvbench
