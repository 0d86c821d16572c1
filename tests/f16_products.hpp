#pragma once
// The check that a device computed f16's rounding of q * s for every int8 code q and every
// f16 scale s a filter keeps: `got` holds 65536 x 256 floats, product (s bits h, q) at
// got[256 h + q + 128]. Used by the tests of round_f16_product (f32 arithmetic,
// tests/test_runtime.cpp) and of the f16 product (tests/test_dequant_codes.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/float_format.hpp"

namespace kvbench {

struct ProductCheck {
  size_t checked = 0, wrong = 0;
};

// Counts the products checked and the wrong ones (the first 5 reported, named by `what`);
// signed zeros and the overflow to inf must match too.
template <typename Keep>
ProductCheck check_f16_products(const std::vector<float>& got, Keep keep_scale, const std::string& what) {
  ProductCheck r;
  for (uint32_t h = 0; h < 65536; ++h) {
    if (!keep_scale(h)) continue;
    const double s = f16_bits_to_double(static_cast<uint16_t>(h));
    for (int q = -128; q < 128; ++q) {
      const double want = round_f16(static_cast<float>(q * s));  // q * s is exact in f32
      const float g = got[size_t{h} * 256 + static_cast<size_t>(q + 128)];
      ++r.checked;
      if (!(static_cast<double>(g) == want && std::signbit(g) == std::signbit(want)) && r.wrong++ < 5)
        FAIL_CHECK(what << "(" << q << " * " << s << ") = " << g << ", want " << want);
    }
  }
  return r;
}

}  // namespace kvbench
