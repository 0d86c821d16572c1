#include "check/expected.hpp"

namespace kvbench {

Expected expect_unchanged(const Tensor& initial) {
  Expected e{.tensor = initial.name()};
  e.value.resize(initial.numel());
  initial.get_range(0, initial.numel(), e.value.data());
  e.exact = e.value;
  e.touched.assign(initial.numel(), 0);
  return e;
}

}  // namespace kvbench
