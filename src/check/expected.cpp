#include "check/expected.hpp"

namespace kvbench {

Expected expect_unchanged(const Tensor& initial) {
  Expected e{.tensor = initial.name()};
  e.value.resize(initial.numel());
  for (size_t i = 0; i < initial.numel(); ++i) e.value[i] = initial.get(i);
  e.exact = e.value;
  e.alternate.assign(initial.numel(), Expected::none);
  e.touched.assign(initial.numel(), 0);
  return e;
}

}  // namespace kvbench
