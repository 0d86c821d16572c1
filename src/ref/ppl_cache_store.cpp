#include "ref/ppl_cache_store.hpp"

#include <algorithm>
#include <vector>

#include "core/parallel.hpp"
#include "ref/quant.hpp"

namespace kvbench {

void store_ppl_rows(std::span<const PplRow> to_store, size_t width, int64_t quant_bit, int64_t quant_group,
                    DType t1, DType scale_dtype, Expected& cache, Expected& scale, unsigned threads,
                    PplStoreFault fault) {
  // In the cache's order, so that the records ascend and need no sorting (the golden is
  // the same in any order).
  std::vector<PplRow> rows(to_store.begin(), to_store.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const PplRow& a, const PplRow& b) { return a.cache_offset < b.cache_offset; });
  const bool quant = quant_bit != 0;
  const int64_t qmax = quant_bit == 8 ? 127 : 7;
  const auto G = static_cast<size_t>(quant_group);
  const size_t groups = quant ? width / G : 0;
  // A chunk of rows is quantized in parallel into these buffers (row r at r * width or
  // r * groups), then recorded by this thread.
  constexpr size_t kChunk = 256;
  std::vector<double> value(kChunk * width), exact(kChunk * width), alternate(kChunk * width),
      group_scale(kChunk * groups), group_exact(kChunk * groups);
  cache.reserve_writes(rows.size() * width);
  if (quant) scale.reserve_writes(rows.size() * groups);
  for (size_t first = 0; first < rows.size(); first += kChunk) {
    const size_t n = std::min(kChunk, rows.size() - first);
    parallel_for(static_cast<int64_t>(n), threads, [&](int64_t i) {
      const PplRow& row = rows[first + static_cast<size_t>(i)];
      double* v = &value[static_cast<size_t>(i) * width];
      row.source->get_range(row.source_offset, width, v);
      if (!quant) {
        round_span(t1, v, width);
        return;
      }
      thread_local GroupCodes q;  // reused: a row is many small groups
      for (size_t g = 0; g < groups; ++g) {
        quantize_symmetric(v + g * G, G, qmax, t1, q, fault.quant);
        const size_t at = static_cast<size_t>(i) * width + g * G;
        std::copy(q.code.begin(), q.code.end(), v + g * G);  // after the group's last read of v
        std::copy(q.quotient.begin(), q.quotient.end(), &exact[at]);
        std::copy(q.alternate.begin(), q.alternate.end(), &alternate[at]);
        // The scale before its rounding to the scale dtype (specs/golden-format.md).
        group_exact[static_cast<size_t>(i) * groups + g] = q.scale;
        group_scale[static_cast<size_t>(i) * groups + g] = round_to(scale_dtype, q.scale);
      }
      if (fault.swap_nibbles && quant_bit == 4)
        for (size_t k = 0; k + 1 < width; k += 2) std::swap(v[k], v[k + 1]);
    });
    for (size_t i = 0; i < n; ++i) {
      const PplRow& row = rows[first + i];
      const double* v = &value[i * width];
      if (!quant) {
        cache.write_row(row.cache_offset, width, v, v);
        continue;
      }
      scale.write_row(row.scale_offset, groups, &group_scale[i * groups], &group_exact[i * groups]);
      cache.write_row(row.cache_offset, width, v, &exact[i * width]);
      for (size_t k = 0; k < width; ++k) cache.set_alternate(row.cache_offset + k, alternate[i * width + k]);
    }
  }
}

}  // namespace kvbench
