#include "core/rng.hpp"

#include <cmath>

namespace kvbench {

uint64_t fnv1a64(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

CounterRng::CounterRng(uint64_t seed, std::string_view tensor_name)
    : key_(splitmix64(seed ^ fnv1a64(tensor_name))) {}

int64_t CounterRng::integer(uint64_t index, int64_t low, int64_t high) const {
  const uint64_t span = static_cast<uint64_t>(high - low) + 1;
  return low + static_cast<int64_t>(span == 0 ? word(index) : word(index) % span);
}

}  // namespace kvbench
