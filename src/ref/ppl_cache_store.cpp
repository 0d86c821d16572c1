#include "ref/ppl_cache_store.hpp"

#include "ref/quant.hpp"

namespace kvbench {

void store_ppl_row(const std::vector<double>& x, int64_t quant_bit, int64_t quant_group, DType t1, DType scale_dtype,
                   size_t cache_offset, size_t scale_offset, Expected& cache, Expected& scale) {
  if (quant_bit == 0) {
    for (size_t d = 0; d < x.size(); ++d) {
      cache.value[cache_offset + d] = cache.exact[cache_offset + d] = round_to(t1, x[d]);
      cache.touched[cache_offset + d] = 1;
    }
    return;
  }
  const int64_t qmax = quant_bit == 8 ? 127 : 7;
  const auto G = static_cast<size_t>(quant_group);
  for (size_t g = 0; g * G < x.size(); ++g) {
    const GroupCodes q = quantize_symmetric(&x[g * G], G, qmax, t1);
    // The scale before its rounding to the scale dtype (specs/golden-format.md).
    scale.value[scale_offset + g] = round_to(scale_dtype, q.scale);
    scale.exact[scale_offset + g] = q.scale;
    scale.touched[scale_offset + g] = 1;
    for (size_t k = 0; k < G; ++k) {
      const size_t i = cache_offset + g * G + k;
      cache.value[i] = q.code[k];
      cache.exact[i] = q.quotient[k];
      cache.set_alternate(i, q.alternate[k]);
      cache.touched[i] = 1;
    }
  }
}

}  // namespace kvbench
