#include "ref/ppl_cache_store.hpp"

#include "ref/quant.hpp"

namespace kvbench {

void store_ppl_row(const std::vector<double>& x, int64_t quant_bit, int64_t quant_group, DType t1, DType scale_dtype,
                   size_t cache_offset, size_t scale_offset, Expected& cache, Expected& scale) {
  if (quant_bit == 0) {
    std::vector<double> stored(x.size());
    for (size_t d = 0; d < x.size(); ++d) stored[d] = round_to(t1, x[d]);
    cache.write_row(cache_offset, stored.size(), stored.data(), stored.data());
    return;
  }
  const int64_t qmax = quant_bit == 8 ? 127 : 7;
  const auto G = static_cast<size_t>(quant_group);
  for (size_t g = 0; g * G < x.size(); ++g) {
    const GroupCodes q = quantize_symmetric(&x[g * G], G, qmax, t1);
    // The scale before its rounding to the scale dtype (specs/golden-format.md).
    scale.write(scale_offset + g, round_to(scale_dtype, q.scale), q.scale);
    const size_t first = cache_offset + g * G;
    cache.write_row(first, G, q.code.data(), q.quotient.data());
    for (size_t k = 0; k < G; ++k) cache.set_alternate(first + k, q.alternate[k]);
  }
}

}  // namespace kvbench
